import { eq } from "drizzle-orm";
import { evolutionInstances } from "../../../db/schema";
import { digitsOf, samePhone, uniquePhones } from "../../phones/phone";
import { type GroupState, type LidPhone, type ParticipantOutcome, ProviderSendError, ProviderUnavailableError } from "../provider";
import { evolutionErrorText, EvolutionHttpError, EvolutionUnreachableError } from "./client";
import { type EvolutionContext, isLostInstance } from "./context";
import type { GroupListings } from "./group-listing";
import type { Instances } from "./instances";
import { type EvolutionParticipant, isLid, isOwn, jidNumber, type OwnIds, pairsOf, participantNumber, type ParticipantUpdate, updateNumber } from "./jids";

const inviteUrlPrefix = "https://chat.whatsapp.com/";

/** A failed group-management call, as the provider interface classifies failures. */
export function groupError(err: unknown, what: string): Error {
  if (err instanceof ProviderUnavailableError || err instanceof ProviderSendError) return err;
  if (err instanceof EvolutionUnreachableError) return new ProviderUnavailableError(`${what}: ${err.message}`);
  if (err instanceof EvolutionHttpError) {
    const text = evolutionErrorText(err.body, err.message);
    if (isLostInstance(err) || /connection closed|not connected/i.test(text)) return new ProviderUnavailableError(`${what}: ${text}`);
    if (err.status === 401 || err.status === 403) return new ProviderUnavailableError(`${what}: Evolution API refused our API key (${text})`);
    if (/rate-?overlimit/i.test(text)) return new ProviderSendError(`${what}: ${text}`, true, { rateLimited: true });
    return new ProviderSendError(`${what}: ${text}`, err.status >= 500 || err.status === 429);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Managing a channel's groups (launches; docs/evolution.md#groups-for-launches): admins, invite links, state. */
export class Groups {
  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
    private readonly listings: GroupListings,
  ) {}

  /** The instance of a connected channel, for group management (Evolution answers `Connection Closed` otherwise). */
  async openInstance(channelId: string) {
    const row = await this.instances.row(channelId);
    if (row.state !== "open") throw new ProviderUnavailableError(`Channel ${channelId} is not connected: it cannot manage groups now.`);
    return row;
  }

  /**
   * One group-management call (`/group/<action>/<instance>?groupJid=`), its failure mapped: the gateway
   * down, a lost instance or `Connection Closed` → ProviderUnavailableError; `rate-overlimit` → a
   * transient, rate-limited ProviderSendError; another 5xx → transient; a 4xx → permanent (not an admin,
   * not in the group).
   */
  async groupCall<T>(
    channelId: string,
    instanceName: string,
    method: "GET" | "POST",
    action: string,
    options: { groupId?: string; body?: unknown; retry?: boolean; timeoutMs?: number } = {},
  ): Promise<T> {
    try {
      return await this.instances.onInstance(channelId, () =>
        this.ctx.client.request<T>(method, `/group/${action}/${encodeURIComponent(instanceName)}`, {
          query: options.groupId ? { groupJid: options.groupId } : {},
          body: options.body ?? (method === "POST" ? {} : undefined),
          retry: options.retry ?? method === "GET",
          timeoutMs: options.timeoutMs,
        }),
      );
    } catch (err) {
      throw groupError(err, `Evolution API ${action} for ${options.groupId ?? instanceName}`);
    }
  }

  /**
   * A member's message deleted for everyone (moderation; docs/evolution.md#moderation-messages-in-groups):
   * `DELETE /chat/deleteMessageForEveryone/{instance}` `{id, fromMe: false, remoteJid, participant}` (2.3.7
   * `chat.router.ts`, `chat.schema.ts` deleteMessageSchema), which has Baileys send the revoke
   * (`sendMessage(remoteJid, {delete: key})`, `svc` deleteMessage) and answers 201 with the revoke message; any
   * failure is its 500 "Error while deleting message for everyone". `participant` is the sender's JID as the message's
   * key named it (a LID, or a phone JID); digits become a phone JID.
   */
  async deleteForEveryone(channelId: string, instanceName: string, groupId: string, message: { id: string; sender: string }) {
    const participant = message.sender.includes("@") ? message.sender : `${digitsOf(message.sender)}@s.whatsapp.net`;
    try {
      await this.instances.onInstance(channelId, () =>
        this.ctx.client.request("DELETE", `/chat/deleteMessageForEveryone/${encodeURIComponent(instanceName)}`, {
          body: { id: message.id, fromMe: false, remoteJid: groupId, participant },
          retry: false,
        }),
      );
    } catch (err) {
      throw groupError(err, `Evolution API deleteMessageForEveryone ${message.id} in ${groupId}`);
    }
  }

  /**
   * `updateParticipant` add, then promote. Baileys answers each participant with a status
   * (`groupParticipantsUpdate` → `[{status, jid, content}]`, `status` "200" or WhatsApp's error code: 403
   * privacy, 408 left recently, 409 already in, …) and Evolution passes the list on as `updateParticipants`
   * with 201: a refusal is in the list, never an error. Each number's outcome is read from both answers
   * (docs/evolution.md#who-is-in-a-group); one the answers do not name is `unknown` (read the group back).
   */
  async promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<ParticipantOutcome[]> {
    const row = await this.openInstance(channelId);
    const numbers = uniquePhones(participants.map(digitsOf).filter((p) => p.length >= 10));
    if (numbers.length === 0) return [];
    type Answer = { updateParticipants?: ParticipantUpdate[] };
    const added = await this.groupCall<Answer>(channelId, row.instanceName, "POST", "updateParticipant", {
      groupId,
      body: { action: "add", participants: numbers },
    });
    const promoted = await this.groupCall<Answer>(channelId, row.instanceName, "POST", "updateParticipant", {
      groupId,
      body: { action: "promote", participants: numbers },
      retry: true,
    });
    const outcomes = participantOutcomes(numbers, added?.updateParticipants ?? [], promoted?.updateParticipants ?? []);
    const refused = outcomes.filter((o) => o.state !== "admin");
    if (refused.length > 0)
      console.warn(`[evolution] adding and promoting in ${groupId}: ${refused.map((o) => `${o.phone} ${o.state} ${o.reason ?? ""}`).join(", ")}`);
    return outcomes;
  }

  /** `GET /group/inviteCode` → `https://chat.whatsapp.com/<code>`; 404 "No invite code" (not an admin) is a permanent ProviderSendError. */
  async inviteUrl(channelId: string, groupId: string): Promise<string> {
    const row = await this.openInstance(channelId);
    const res = await this.groupCall<{ inviteCode?: string }>(channelId, row.instanceName, "GET", "inviteCode", { groupId });
    if (!res?.inviteCode) throw new ProviderSendError(`Evolution API gave no invite code for ${groupId}.`, true);
    return `${inviteUrlPrefix}${res.inviteCode}`;
  }

  /** `POST /group/revokeInviteCode` answers the new code. Not repeated on its own (each call revokes again). */
  async renewInviteUrl(channelId: string, groupId: string): Promise<string> {
    const row = await this.openInstance(channelId);
    const res = await this.groupCall<{ revoked?: boolean; inviteCode?: string }>(channelId, row.instanceName, "POST", "revokeInviteCode", {
      groupId,
      retry: false,
    });
    if (!res?.inviteCode) return this.inviteUrl(channelId, groupId);
    return `${inviteUrlPrefix}${res.inviteCode}`;
  }

  /**
   * `GET /group/findGroupInfos`: the number among the participants — by phone (its JID, or the
   * `phoneNumber` of a LID) or by its LID, which WhatsApp uses in groups it addresses by LID — and its
   * admin rank. WhatsApp's "not found" answers (item-not-found, forbidden: the number is not in it) mean
   * the group is gone; anything else (rate limit, gateway down) is ProviderUnavailableError, never
   * "gone". WhatsApp answers a group's metadata only to its participants, so when the number is listed
   * by a LID we have not learned yet, it is in the group, and whether it is an admin is asked of the one
   * thing only admins may do without changing anything: reading the invite code. A gone group leaves the
   * cached list.
   */
  async groupState(channelId: string, groupId: string): Promise<GroupState> {
    const row = await this.openInstance(channelId);
    // Without the number, "not an admin" cannot be told from "not found": never guess a group broken.
    const me = await this.ownIds(channelId);
    let info: { size?: number; participants?: EvolutionParticipant[] } | null;
    try {
      info = await this.instances.onInstance(channelId, () =>
        this.ctx.client.request<{ size?: number; participants?: EvolutionParticipant[] } | null>(
          "GET",
          `/group/findGroupInfos/${encodeURIComponent(row.instanceName)}`,
          {
            query: { groupJid: groupId },
            retry: true,
          },
        ),
      );
    } catch (err) {
      if (
        err instanceof EvolutionHttpError &&
        err.status === 404 &&
        !isLostInstance(err) &&
        /item-not-found|forbidden|not-authorized|not-acceptable|not a participant/i.test(err.message)
      ) {
        info = null;
      } else throw groupError(err, `Evolution API findGroupInfos for ${groupId}`);
    }
    const participants = info?.participants ?? [];
    const known = await this.learnOwnLid(channelId, participants, {}, me);
    const mine = participants.find((p) => isOwn(p, known));
    const size = info?.size ?? participants.length;
    const pairs = pairsOf(participants);
    const withPairs = pairs.length > 0 ? { pairs } : {};
    if (mine) return { exists: true, admin: mine.admin === "admin" || mine.admin === "superadmin", size, ...withPairs };
    // Everyone listed by a phone we can read, and not us: we are not in it.
    const unreadable = participants.some((p) => isLid(p.id) && !participantNumber(p));
    if (!info || !unreadable) {
      await this.listings.forgetGroup(channelId, groupId);
      return { exists: false, admin: false, size: 0 };
    }
    return { exists: true, admin: await this.readsInviteCode(channelId, row.instanceName, groupId), size, ...withPairs };
  }

  /** Only admins may read a group's invite code (`not-authorized` otherwise): whether the number is one. */
  private async readsInviteCode(channelId: string, instanceName: string, groupId: string): Promise<boolean> {
    try {
      await this.groupCall(channelId, instanceName, "GET", "inviteCode", { groupId });
      return true;
    } catch (err) {
      if (err instanceof ProviderSendError && !err.transient && /not-authorized/i.test(err.message)) return false;
      throw err instanceof ProviderUnavailableError
        ? err
        : new ProviderUnavailableError(`Evolution API cannot tell whether the number administers ${groupId}: ${(err as Error).message}`);
    }
  }

  /** The channel's phone number and, once learned, its LID. Throws ProviderUnavailableError while the number is not known. */
  async ownIds(channelId: string): Promise<OwnIds> {
    const phone = await this.instances.ownNumber(channelId);
    if (!phone) throw new ProviderUnavailableError(`Evolution API did not tell the number of channel ${channelId}: its groups cannot be told apart.`);
    const row = await this.instances.row(channelId);
    return { phone, lid: samePhone(row.ownLidPhone, phone) ? row.ownLid : null };
  }

  /**
   * Learns the number's LID where WhatsApp shows it beside the phone: a participant listed by LID with
   * our `phoneNumber`, our phone JID with its `lid`, or the creator of a group we just made (`owner`,
   * with `ownerPn` when WhatsApp gives it). Kept on the instance (for that phone) across restarts.
   */
  async learnOwnLid(channelId: string, participants: EvolutionParticipant[], made: { creator?: string; creatorPn?: string }, me?: OwnIds): Promise<OwnIds> {
    const ids = me ?? (await this.ownIds(channelId).catch(() => null));
    if (!ids) return { phone: "", lid: null };
    let lid: string | undefined;
    for (const p of participants) {
      if (isLid(p.id) && jidNumber(p.phoneNumber) === ids.phone) lid = p.id;
      else if (jidNumber(p.id) === ids.phone && isLid(p.lid)) lid = p.lid;
    }
    if (!lid && isLid(made.creator) && (!made.creatorPn || jidNumber(made.creatorPn) === ids.phone)) lid = made.creator;
    if (!lid || lid === ids.lid) return ids;
    await this.ctx.db.update(evolutionInstances).set({ ownLid: lid, ownLidPhone: ids.phone }).where(eq(evolutionInstances.channelId, channelId));
    return { ...ids, lid };
  }

  /**
   * `GET /group/participants` (Baileys' group metadata: one WhatsApp query, never repeated here): the
   * pairings of the people listed with both a LID and a phone number. Evolution offers no route to Baileys'
   * own LID map (`signalRepository.lidMapping`), so the group's list is the one place to look a LID up.
   */
  async participantPairs(channelId: string, groupId: string): Promise<LidPhone[]> {
    const row = await this.openInstance(channelId);
    // Asked while a webhook waits for its answer: a short time-out (the LID stays as it came when it passes).
    const res = await this.groupCall<{ participants?: EvolutionParticipant[] }>(channelId, row.instanceName, "GET", "participants", {
      groupId,
      retry: false,
      timeoutMs: Math.min(this.ctx.opts.timeoutMs, 5000),
    });
    return pairsOf(Array.isArray(res?.participants) ? res.participants : []);
  }
}

/**
 * Each number's outcome from an add's and a promotion's per-participant answers: promoted (200) is an admin;
 * added or already in (200, 409) but not promoted is a member; an add refused with any other status is absent
 * (that status is the reason); a number neither answer names (a LID answered without its phone) is unknown.
 */
export function participantOutcomes(numbers: string[], added: ParticipantUpdate[], promoted: ParticipantUpdate[]): ParticipantOutcome[] {
  const find = (list: ParticipantUpdate[], n: string) => list.find((u) => samePhone(updateNumber(u), n));
  return numbers.map((phone): ParticipantOutcome => {
    const a = find(added, phone);
    const p = find(promoted, phone);
    if (p?.status === "200") return { phone, state: "admin" };
    if (a && a.status !== "200" && a.status !== "409") return { phone, state: "absent", reason: a.status ?? "refused" };
    if (a) return { phone, state: "member", ...(p?.status ? { reason: p.status } : {}) };
    return { phone, state: "unknown", ...(p?.status ? { reason: p.status } : {}) };
  });
}

/**
 * Each requested number as a group's participant list shows it (Evolution's create answers the group's metadata
 * read after the promotion, without those its WhatsApp check dropped): listed → admin or member; not listed →
 * absent (`not_added`), unless someone but the creator is listed by a LID alone (it may be them): unknown.
 */
export function listedOutcomes(numbers: string[], participants: EvolutionParticipant[], creator?: string): ParticipantOutcome[] {
  const others = participants.filter((p) => typeof p?.id === "string" && p.id !== creator);
  const unreadable = others.some((p) => isLid(p.id) && !participantNumber(p));
  return numbers.map((phone): ParticipantOutcome => {
    const p = others.find((x) => samePhone(participantNumber(x), phone));
    if (p) return { phone, state: p.admin === "admin" || p.admin === "superadmin" ? "admin" : "member" };
    return unreadable ? { phone, state: "unknown" } : { phone, state: "absent", reason: "not_added" };
  });
}
