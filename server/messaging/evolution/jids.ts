import { samePhone } from "../../phones/phone";
import type { LidPhone } from "../provider";

/**
 * A group participant as Evolution reports it: Baileys' GroupParticipant (`src/Socket/groups.ts`
 * extractGroupMetadata) — `id` a phone JID or a LID, `phoneNumber` the phone JID of a LID and `lid`
 * the LID of a phone JID when WhatsApp shares them.
 */
export interface EvolutionParticipant {
  id: string;
  phoneNumber?: string;
  lid?: string;
  jid?: string;
  admin?: "admin" | "superadmin" | null;
}

/** The channel's own ids: its phone number (digits) and its LID (`<digits>@lid`) once learned. */
export interface OwnIds {
  phone: string;
  lid: string | null;
}

export const isLid = (jid: string | undefined | null): jid is string => /^\d+@lid$/.test(jid ?? "");

/**
 * Is this participant the channel's number: by phone (its JID or the `phoneNumber` of a LID, through the phone
 * codec: with or without the ninth digit) or by our LID.
 */
export function isOwn(p: EvolutionParticipant, me: OwnIds): boolean {
  return samePhone(participantNumber(p), me.phone) || (me.lid !== null && (p.id === me.lid || p.lid === me.lid));
}

/** May a group created by `owner` be ours? Another phone is not; a LID is unless we know ours and it differs; no owner may be. */
export function mayBeOurs(owner: string | undefined, me: OwnIds | null): boolean {
  if (!owner || !me) return true;
  const phone = jidNumber(owner);
  if (phone) return samePhone(phone, me.phone);
  if (isLid(owner)) return me.lid === null || owner === me.lid;
  return false;
}

/** `5511…@s.whatsapp.net` (or `5511…:12@s.whatsapp.net`, a device) → digits; anything else → null. */
export function jidNumber(jid: string | undefined): string | null {
  const m = /^(\d{8,20})(?::\d+)?@s\.whatsapp\.net$/.exec(jid ?? "");
  return m ? m[1] : null;
}

/** A participant's phone number (digits), from its id or, for a LID, its `phoneNumber`/`jid`. */
export function participantNumber(p: EvolutionParticipant): string | null {
  return jidNumber(p.id) ?? jidNumber(p.phoneNumber) ?? jidNumber(p.jid);
}

/** `1234…@lid` (or with a device suffix `:3`) → `1234…@lid`; anything else → null. */
export function lidOf(jid: unknown): string | null {
  const m = typeof jid === "string" ? /^(\d{5,30})(?::\d+)?@lid$/.exec(jid) : null;
  return m ? `${m[1]}@lid` : null;
}

/** The pairing a participant entry carries: its LID and its phone number, when both are there. */
export function pairOf(p: EvolutionParticipant): LidPhone | null {
  const phone = participantNumber(p);
  const lid = lidOf(p.id) ?? lidOf(p.lid);
  return phone && lid ? { lid, phone } : null;
}

/** Every pairing a participant list carries (findGroupInfos, participants): one per person listed with both ids. */
export const pairsOf = (participants: EvolutionParticipant[]) => participants.flatMap((p) => (typeof p?.id === "string" ? (pairOf(p) ?? []) : []));

/** One participant of Baileys' groupParticipantsUpdate answer (`{status, jid, content}`; src/Socket/groups.ts). */
export interface ParticipantUpdate {
  status?: string;
  jid?: string;
  content?: { attrs?: { jid?: string; phone_number?: string; error?: string } };
}

/** The phone number an update is about: its JID, or the `phone_number` WhatsApp puts beside a LID. */
export const updateNumber = (u: ParticipantUpdate) => jidNumber(u.jid) ?? jidNumber(u.content?.attrs?.phone_number);
