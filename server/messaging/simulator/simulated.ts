import { createHash, randomBytes, randomInt } from "node:crypto";
import { platformForm } from "../../phones/phone";
import type { ProviderGroup } from "../provider";

/** Stable `<digits>@g.us` ids derived from the channel id: the same channel always has the same groups. */
export function simulatedGroups(channelId: string, count: number): ProviderGroup[] {
  const prefix = derivedPrefix(channelId);
  const width = derivedWidth(count);
  return Array.from({ length: count }, (_, i) => {
    const n = String(i + 1).padStart(width, "0");
    return { id_group: `${prefix}${n}@g.us`, name: `Grupo ${n}` };
  });
}

/**
 * The channel's derived group `groupId` (one of simulatedGroups(channelId, count)), or undefined, read from the
 * id alone: the send path asks this for every message, and building the channel's list (thousands of groups) for
 * each loop cost the scale bench most of its server CPU in garbage collection.
 */
export function derivedGroup(channelId: string, groupId: string, count: number): ProviderGroup | undefined {
  const prefix = derivedPrefix(channelId);
  if (!groupId.startsWith(prefix) || !groupId.endsWith("@g.us")) return undefined;
  const n = groupId.slice(prefix.length, -"@g.us".length);
  if (n.length !== derivedWidth(count) || !/^\d+$/.test(n)) return undefined;
  const i = Number(n);
  return i >= 1 && i <= count ? { id_group: groupId, name: `Grupo ${n}` } : undefined;
}

const derivedWidth = (count: number) => Math.max(2, String(count).length);

/** `120363` + 10 digits from the channel id's hash, remembered (a bounded memo: a hash per message was measurable). */
const prefixes = new Map<string, string>();

function derivedPrefix(channelId: string) {
  let prefix = prefixes.get(channelId);
  if (prefix === undefined) {
    const digest = createHash("sha256").update(channelId).digest();
    prefix = `120363${(digest.readBigUInt64BE(0) % 10_000_000_000n).toString().padStart(10, "0")}`;
    if (prefixes.size >= 10_000) prefixes.clear();
    prefixes.set(channelId, prefix);
  }
  return prefix;
}

/**
 * The DDDs of the simulated numbers: all ≥ 31, where Evolution's `formatBRNumber` drops a mobile's ninth digit, so
 * every flow meets a number in both forms (docs/simulator.md#numbers).
 */
const simulatedDdds = [31, 41, 48, 51, 61, 71, 81, 85, 91] as const;

/** A Brazilian mobile (55 + DDD + 9 + 8 digits starting 8) as the platform writes it: without its ninth digit. */
const simulatedMobile = (ddd: number, sevenDigits: number) => platformForm(`55${ddd}98${sevenDigits.toString().padStart(7, "0")}`);

/**
 * The channel's own simulated number, stable, as the platform reports it (ownNumber, participants): a mobile of a DDD
 * ≥ 31 from the channel id, without its ninth digit (`55 31 8xxx-xxxx`; the tenant may type it `55 31 9 8xxx-xxxx`).
 */
export function simulatedOwnNumber(channelId: string): string {
  const digest = createHash("sha256").update(`own-number:${channelId}`).digest();
  return simulatedMobile(simulatedDdds[digest.readUInt8(4) % simulatedDdds.length], digest.readUInt32BE(0) % 10_000_000);
}

/** A participant as the platform writes it: a number in its platform form (phone.ts `platformForm`); a LID as it is. */
export const asPlatformWrites = (participant: string) => (participant.includes("@") ? participant : platformForm(participant));

/** WhatsApp's limit on a group's members. */
export const SIMULATOR_GROUP_LIMIT = 1024;

export const INVITE_PREFIX = "https://chat.whatsapp.com/";

const CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A WhatsApp-like invite code: 22 letters and digits. */
export const newInviteCode = () => Array.from({ length: 22 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");

/** A new group's id: `120363` + 12 random digits + `@g.us`, the shape of today's WhatsApp group ids. */
export const newGroupId = () => `120363${(randomBytes(8).readBigUInt64BE(0) % 1_000_000_000_000n).toString().padStart(12, "0")}@g.us`;

/** A simulated person: a mobile of a DDD ≥ 31 with random digits, as the platform writes it (without its ninth digit). */
export const randomPerson = () => simulatedMobile(simulatedDdds[randomInt(simulatedDdds.length)], randomInt(10_000_000));
