import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto";
import { and, asc, count, desc, eq, gt, inArray, isNull, lte, max, notInArray, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { inJson, rowsOf } from "../../../db/params";
import {
  channels,
  simulatorChannels,
  simulatorFailures,
  simulatorGroupCreateLimits,
  simulatorGroupCreations,
  simulatorGroups,
  simulatorInvites,
  simulatorLatency,
  simulatorMessages,
  simulatorParticipants,
} from "../../../db/schema";
import {
  notSent,
  ProviderEvents,
  ProviderSendError,
  ProviderUnavailableError,
  type ChannelStatus,
  type NumberLossReason,
  type GroupState,
  type NewGroup,
  type MessagingProvider,
  type OutboundMessage,
  type PairingInfo,
  type ProviderListener,
  type ProviderGroup,
  type LookupResult,
  type Receipt,
  type SentLookup,
  type SendManyOptions,
  type SendOutcome,
  type SendReceipt,
} from "../provider";

export interface SimulatorOptions {
  pairingMs: number;
  groupsPerChannel: number;
}

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

/** The channel's own simulated number: `55119` + 8 digits from the channel id (a São Paulo mobile), stable. */
export function simulatedOwnNumber(channelId: string): string {
  const digest = createHash("sha256").update(`own-number:${channelId}`).digest();
  return `55119${(digest.readUInt32BE(0) % 100_000_000).toString().padStart(8, "0")}`;
}

/** WhatsApp's limit on a group's members. */
export const SIMULATOR_GROUP_LIMIT = 1024;

const INVITE_PREFIX = "https://chat.whatsapp.com/";
const CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** A WhatsApp-like invite code: 22 letters and digits. */
const newInviteCode = () => Array.from({ length: 22 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
/** A new group's id: `120363` + 12 random digits + `@g.us`, the shape of today's WhatsApp group ids. */
const newGroupId = () => `120363${(randomBytes(8).readBigUInt64BE(0) % 1_000_000_000_000n).toString().padStart(12, "0")}@g.us`;
/** A simulated person: a São Paulo mobile number, `55119` + 8 random digits. */
const randomPerson = () => `55119${randomInt(100_000_000).toString().padStart(8, "0")}`;

/** The outcome of a join through the control endpoints: `full` when the group is at its limit (nobody joined). */
export type JoinOutcome =
  | { kind: "joined"; channelId: string; groupId: string; joined: string[]; members: number }
  | { kind: "full"; members: number }
  | { kind: "gone" };

/** An injected failure's key: channel and group (ids hold no spaces). */
const failureKey = (m: { channelId: string; groupId: string }) => `${m.channelId} ${m.groupId}`;

interface ChannelState {
  channelId: string;
  online: boolean;
  latencyMs: number;
  /** An injected failure or a rate limit is set: the channel's messages take the second path. */
  armed: boolean;
  rateLimitPerMinute: number | null;
}
interface SentRow {
  deliveryKey: string;
  channelId: string;
  messageId: string;
  sentAt: string | Date;
}
const sentOutcome = (r: SentRow): SendOutcome => ({ ok: true, receipt: { messageId: r.messageId, sentAt: new Date(r.sentAt) } });

/** Who the sender is in the group: its number, and whether the group is one of its derived groups (`Grupo nn`). */
interface Sender {
  own: string;
  derived: (groupId: string) => boolean;
}

/** A message log row, keyed by column name, with what the reach test needs (own_number, derived; not stored). */
function messageRow(message: OutboundMessage, sender: Sender) {
  const c = message.content;
  return {
    own_number: sender.own,
    derived: sender.derived(message.groupId),
    delivery_key: message.deliveryKey,
    message_id: `SIM${randomUUID().replaceAll("-", "").slice(0, 20).toUpperCase()}`,
    id_channel: message.channelId,
    id_group: message.groupId,
    id_campaign: message.campaignId ?? null,
    message_type: c.type,
    text: c.type === "text" || c.type === "carousel" ? c.text : c.caption,
    media_url: c.type === "text" || c.type === "carousel" ? null : c.mediaUrl,
    file_name: c.type === "document" ? (c.fileName ?? null) : null,
    cards: c.type === "carousel" ? c.cards : null,
    mention_all: message.mentionAll,
    link_preview: message.linkPreview !== false,
  };
}

/** A loop's message rows as one JSON parameter (a VALUES list would bind a dozen parameters per row). */
const messageValues = (rows: ReturnType<typeof messageRow>[]) =>
  sql`select * from json_to_recordset(${JSON.stringify(rows)}::json) as v(delivery_key text, message_id text, id_channel text, id_group text,
        id_campaign text, message_type text, text text, media_url text, file_name text, cards jsonb, mention_all boolean, link_preview boolean,
        own_number text, derived boolean)`;
const messageColumns = sql.raw(
  "(delivery_key, message_id, id_channel, id_group, id_campaign, message_type, text, media_url, file_name, cards, mention_all, link_preview, sent_at, read_at)",
);
const messageFields = (sentAt: SQL = sql`now()`) =>
  sql`v.delivery_key, v.message_id, v.id_channel, v.id_group, v.id_campaign, v.message_type, v.text, v.media_url, v.file_name, v.cards, v.mention_all, v.link_preview, ${sentAt}, null::timestamptz`;

/**
 * Whether the sender of `v` reaches its group (CONTRACT §7): its number is a participant (an admin where only
 * admins post), or the group is one of its derived groups that nobody has touched yet (no row: its number is
 * its only member). WhatsApp refuses a send to a group the number is not in.
 */
const reachesSql = sql`(exists (select 1 from ${simulatorParticipants} p left join ${simulatorGroups} g on g.id_group = p.id_group
    where p.id_group = v.id_group and p.participant = v.own_number and (p.admin or g.admins_only is not true))
  or (v.derived and not exists (select 1 from ${simulatorGroups} g2 where g2.id_group = v.id_group)))`;

/** What a send's INSERT returns: the SentRow of each message it stored. */
const sentReturning = sql.raw(`returning delivery_key as "deliveryKey", id_channel as "channelId", message_id as "messageId", sent_at as "sentAt"`);

/** Reads are marked this long after the acks, all channels' together (SimulatorProvider.deliverReceipts). */
const readDelayMs = 100;
/** A deterministic share of messages (3 in 10) is read, a moment after it is sent. */
const isRead = (deliveryKey: string) => createHash("sha256").update(deliveryKey).digest()[0] % 10 < 3;

/**
 * The simulated chat platform: durable (its state is in the service's database, so it survives
 * restarts like a real gateway would), deduplicating sends by delivery key.
 */
export class SimulatorProvider implements MessagingProvider {
  readonly name = "simulator" as const;
  readonly capabilities = { carousel: true, forward: true, linkPreview: true, mentionAll: true, receipts: true };
  readonly reconcileAfterMs = 0;
  private readonly events = new ProviderEvents("simulator");
  /** Read receipts waiting for markRead. */
  private unread: Receipt[] = [];
  private readTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly opts: SimulatorOptions,
  ) {}

  // ---- group management (launches; docs/simulator.md#groups-invite-links-and-participants) ----

  /** The channel must be paired and online for the number to act on its groups. */
  private async requireConnected(channelId: string) {
    const status = await this.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: it cannot manage groups now.`);
  }

  /**
   * The group's row (whichever channel made it: another channel's number may be in it), made on first use
   * for a derived group (`Grupo nn`) of this channel: the channel's number is then its admin member. A group
   * the number left (state `exists: false`) keeps its row without that member. Undefined when there is no
   * such group; whether the channel's number is in it is ownMembership's question.
   */
  private async groupRow(channelId: string, groupId: string) {
    const [row] = await this.db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId));
    if (row) return row;
    const derived = this.derivedGroup(channelId, groupId);
    if (!derived) return undefined;
    // Derived groups sort before created ones (list-groups shows them first anyway).
    const [made] = await this.db
      .insert(simulatorGroups)
      .values({ groupId, channelId, name: derived.name, createdAt: new Date(0) })
      .onConflictDoNothing()
      .returning();
    if (made) {
      await this.db
        .insert(simulatorParticipants)
        .values({ groupId, channelId, participant: simulatedOwnNumber(channelId), admin: true, joinedAt: new Date() })
        .onConflictDoNothing();
      return made;
    }
    const [again] = await this.db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId));
    return again;
  }

  /** The channel's number's membership of the group: absent (the group is gone for it), member or admin. */
  private async ownMembership(channelId: string, groupId: string) {
    const [own] = await this.db
      .select({ admin: simulatorParticipants.admin })
      .from(simulatorParticipants)
      .where(and(eq(simulatorParticipants.groupId, groupId), eq(simulatorParticipants.participant, simulatedOwnNumber(channelId))));
    return own;
  }

  /** The group as the channel's number sees it, or a ProviderSendError (not transient) when it cannot act as its admin. */
  private async adminGroup(channelId: string, groupId: string) {
    await this.requireConnected(channelId);
    const row = await this.groupRow(channelId, groupId);
    const own = row && (await this.ownMembership(channelId, groupId));
    if (!row || !own) throw new ProviderSendError(`Group ${groupId} not found for channel ${channelId}.`, false);
    if (!own.admin) throw new ProviderSendError(`The number of channel ${channelId} is not an admin of ${groupId}.`, false);
    return row;
  }

  async createGroup(channelId: string, group: NewGroup): Promise<ProviderGroup> {
    await this.requireConnected(channelId);
    const name = group.name.trim();
    if (name.length === 0 || name.length > 100) throw new ProviderSendError("A group's name must have 1 to 100 characters.", false);
    if ((group.description ?? "").length > 2048) throw new ProviderSendError("A group's description is limited to 2,048 characters.", false);
    const own = simulatedOwnNumber(channelId);
    const admins = [...new Set(group.admins.filter((a) => a !== own))];
    if (admins.length + 1 > SIMULATOR_GROUP_LIMIT) throw new ProviderSendError(`A group holds at most ${SIMULATOR_GROUP_LIMIT} participants.`, false);
    if (await this.groupCreationThrottled(channelId, name)) {
      throw new ProviderSendError(`rate-overlimit: WhatsApp throttled group creation on channel ${channelId} (no group was made).`, true, {
        rateLimited: true,
      });
    }
    const groupId = newGroupId();
    const joinedAt = new Date();
    await this.db.transaction(async (tx) => {
      await tx.insert(simulatorGroupCreations).values({ channelId, name, groupId, outcome: "made", at: joinedAt });
      await tx.insert(simulatorGroups).values({
        groupId,
        channelId,
        name,
        description: group.description ?? null,
        pictureUrl: group.pictureUrl ?? null,
        adminsOnly: group.adminsOnly,
        createdAt: joinedAt,
      });
      await tx.insert(simulatorParticipants).values([own, ...admins].map((participant) => ({ groupId, channelId, participant, admin: true, joinedAt })));
    });
    return { id_group: groupId, name, adminsOnly: group.adminsOnly };
  }

  /**
   * Past the channel's `group_create_rate_limit_per_hour` (groups made in the rolling hour), WhatsApp answers
   * rate-overlimit and makes nothing: the refusal is logged too (docs/simulator.md).
   */
  private async groupCreationThrottled(channelId: string, name: string): Promise<boolean> {
    const limit = await this.groupCreateLimit(channelId);
    if (limit === null) return false;
    const at = new Date();
    const [{ made }] = await this.db
      .select({ made: count() })
      .from(simulatorGroupCreations)
      .where(
        and(
          eq(simulatorGroupCreations.channelId, channelId),
          eq(simulatorGroupCreations.outcome, "made"),
          gt(simulatorGroupCreations.at, new Date(at.getTime() - 3_600_000)),
        ),
      );
    if (made < limit) return false;
    await this.db.insert(simulatorGroupCreations).values({ channelId, name, groupId: null, outcome: "rate_limited", at });
    return true;
  }

  /** Control: the channel's group creation limit per rolling hour, or null. */
  async groupCreateLimit(channelId: string): Promise<number | null> {
    const [row] = await this.db.select().from(simulatorGroupCreateLimits).where(eq(simulatorGroupCreateLimits.channelId, channelId));
    return row?.perHour ?? null;
  }

  /** Control: sets the channel's group creation limit per rolling hour (null: none). */
  async setGroupCreateLimit(channelId: string, perHour: number | null) {
    if (perHour === null) await this.db.delete(simulatorGroupCreateLimits).where(eq(simulatorGroupCreateLimits.channelId, channelId));
    else
      await this.db
        .insert(simulatorGroupCreateLimits)
        .values({ channelId, perHour })
        .onConflictDoUpdate({ target: simulatorGroupCreateLimits.channelId, set: { perHour } });
  }

  /** Inspection: the group creations asked of these channels, oldest first. */
  async groupCreations(channelIds: string[]) {
    if (channelIds.length === 0) return [];
    return this.db
      .select()
      .from(simulatorGroupCreations)
      .where(inArray(simulatorGroupCreations.channelId, channelIds))
      .orderBy(asc(simulatorGroupCreations.id));
  }

  /** Promotes to admin, adding first those not in the group (their join is reported, as a gateway does). */
  async promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<void> {
    const group = await this.adminGroup(channelId, groupId);
    const wanted = [...new Set(participants)];
    if (wanted.length === 0) return;
    const present = await this.db
      .select({ participant: simulatorParticipants.participant })
      .from(simulatorParticipants)
      .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, wanted)));
    const added = wanted.filter((p) => !present.some((r) => r.participant === p));
    const joinedAt = new Date();
    if (added.length > 0) {
      await this.db
        .insert(simulatorParticipants)
        .values(added.map((participant) => ({ groupId, channelId: group.channelId, participant, admin: true, joinedAt })))
        .onConflictDoNothing();
    }
    await this.db
      .update(simulatorParticipants)
      .set({ admin: true })
      .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, wanted)));
    if (added.length > 0) await this.events.emit({ type: "group_participants", channelId, groupId, action: "join", participants: added, at: joinedAt });
  }

  /** The current invite code, made on first read (one per group: the group row is locked while it is made). */
  async inviteUrl(channelId: string, groupId: string): Promise<string> {
    await this.adminGroup(channelId, groupId);
    return this.db.transaction(async (tx) => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const [current] = await tx
        .select({ code: simulatorInvites.code })
        .from(simulatorInvites)
        .where(and(eq(simulatorInvites.groupId, groupId), isNull(simulatorInvites.revokedAt)));
      if (current) return INVITE_PREFIX + current.code;
      const code = newInviteCode();
      await tx.insert(simulatorInvites).values({ code, channelId, groupId });
      return INVITE_PREFIX + code;
    });
  }

  async renewInviteUrl(channelId: string, groupId: string): Promise<string> {
    await this.adminGroup(channelId, groupId);
    return INVITE_PREFIX + (await this.replaceInvite(channelId, groupId)).code;
  }

  /** Revokes the current code (if any) and makes a new one; returns both. */
  private async replaceInvite(channelId: string, groupId: string) {
    return this.db.transaction(async (tx) => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const revoked = await tx
        .update(simulatorInvites)
        .set({ revokedAt: new Date() })
        .where(and(eq(simulatorInvites.groupId, groupId), isNull(simulatorInvites.revokedAt)))
        .returning({ code: simulatorInvites.code });
      const code = newInviteCode();
      await tx.insert(simulatorInvites).values({ code, channelId, groupId });
      return { code, revoked: revoked.map((r) => r.code) };
    });
  }

  async groupState(channelId: string, groupId: string): Promise<GroupState> {
    await this.requireConnected(channelId);
    const row = await this.groupRow(channelId, groupId);
    const own = row && (await this.ownMembership(channelId, groupId));
    if (!row || !own) return { exists: false, admin: false, size: 0 };
    return { exists: true, admin: own.admin, size: await this.size(groupId) };
  }

  /** Known once the channel has paired (a real number is known from the pairing on). */
  async ownNumber(channelId: string): Promise<string | null> {
    const row = await this.channel(channelId);
    return row?.paired ? simulatedOwnNumber(channelId) : null;
  }

  private async size(groupId: string, db: Pick<Db, "select"> = this.db) {
    const [{ n }] = await db.select({ n: count() }).from(simulatorParticipants).where(eq(simulatorParticipants.groupId, groupId));
    return n;
  }

  /** Control: which of these channels has the group (a derived one or one it made), or undefined. */
  async channelOfGroup(channelIds: string[], groupId: string): Promise<string | undefined> {
    if (channelIds.length === 0) return undefined;
    const [made] = await this.db
      .select({ channelId: simulatorGroups.channelId })
      .from(simulatorGroups)
      .where(and(eq(simulatorGroups.groupId, groupId), inArray(simulatorGroups.channelId, channelIds)));
    return made?.channelId ?? channelIds.find((id) => this.derivedGroup(id, groupId) !== undefined);
  }

  /** Control: the group the invite code opens, while the code is current and the group exists for its number. */
  async inviteTarget(code: string) {
    const [invite] = await this.db
      .select({ channelId: simulatorInvites.channelId, groupId: simulatorInvites.groupId })
      .from(simulatorInvites)
      .where(and(eq(simulatorInvites.code, code), isNull(simulatorInvites.revokedAt)));
    if (!invite || !(await this.ownMembership(invite.channelId, invite.groupId))) return undefined;
    return invite;
  }

  /**
   * Control: people join (the given numbers or ids, or `count` random numbers), all or none: `full` when
   * the group would pass 1024. Those already in the group are skipped. Emits one `group_participants`
   * join event (awaited: the listeners have run when this returns).
   */
  async joinParticipants(channelId: string, groupId: string, who: string[] | number): Promise<JoinOutcome> {
    const row = await this.groupRow(channelId, groupId);
    if (!row || !(await this.ownMembership(channelId, groupId))) return { kind: "gone" };
    let at = new Date();
    const outcome = await this.db.transaction(async (tx): Promise<JoinOutcome> => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const [{ members, latest }] = await tx
        .select({ members: count(), latest: max(simulatorParticipants.joinedAt) })
        .from(simulatorParticipants)
        .where(eq(simulatorParticipants.groupId, groupId));
      // Strictly after everyone already in: "the N most recent" is then an order of joins, not of clock ticks.
      if (latest && latest.getTime() >= at.getTime()) at = new Date(latest.getTime() + 1);
      let joined: string[];
      if (typeof who === "number") {
        joined = await this.newPeople(tx, groupId, who);
      } else {
        const wanted = [...new Set(who)];
        const present = wanted.length
          ? await tx
              .select({ participant: simulatorParticipants.participant })
              .from(simulatorParticipants)
              .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, wanted)))
          : [];
        joined = wanted.filter((p) => !present.some((r) => r.participant === p));
      }
      if (members + joined.length > SIMULATOR_GROUP_LIMIT) return { kind: "full", members };
      if (joined.length === 0) return { kind: "joined", channelId, groupId, joined, members };
      const inserted = await tx
        .insert(simulatorParticipants)
        .values(joined.map((participant) => ({ groupId, channelId, participant, admin: false, joinedAt: at })))
        .onConflictDoNothing()
        .returning({ participant: simulatorParticipants.participant });
      joined = inserted.map((r) => r.participant);
      return { kind: "joined", channelId, groupId, joined, members: members + joined.length };
    });
    if (outcome.kind === "joined" && outcome.joined.length > 0) {
      await this.events.emit({ type: "group_participants", channelId, groupId, action: "join", participants: outcome.joined, at });
    }
    return outcome;
  }

  /** `n` random people, distinct from each other and from everyone already in the group (a collision draws again). */
  private async newPeople(tx: Pick<Db, "select">, groupId: string, n: number): Promise<string[]> {
    const people = new Set<string>();
    while (people.size < n) {
      const draw = new Set<string>();
      while (draw.size < n - people.size) {
        const p = randomPerson();
        if (!people.has(p)) draw.add(p);
      }
      const present = await tx
        .select({ participant: simulatorParticipants.participant })
        .from(simulatorParticipants)
        .where(and(eq(simulatorParticipants.groupId, groupId), inJson(simulatorParticipants.participant, [...draw])));
      const taken = new Set(present.map((r) => r.participant));
      for (const p of draw) if (!taken.has(p)) people.add(p);
    }
    return [...people];
  }

  /**
   * Control: people leave — the `count` most recent non-admin participants, or the given ones (never
   * the channel's own number; those not in the group are skipped). Emits one `group_participants`
   * leave event, awaited.
   */
  async leaveParticipants(channelId: string, groupId: string, who: string[] | number, keep: string[] = []) {
    const own = simulatedOwnNumber(channelId);
    const staying = [own, ...keep];
    const at = new Date();
    const left = await this.db.transaction(async (tx) => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const leaving =
        typeof who === "number"
          ? (
              await tx
                .select({ participant: simulatorParticipants.participant })
                .from(simulatorParticipants)
                .where(
                  and(
                    eq(simulatorParticipants.groupId, groupId),
                    eq(simulatorParticipants.admin, false),
                    notInArray(simulatorParticipants.participant, staying),
                  ),
                )
                .orderBy(desc(simulatorParticipants.joinedAt), desc(simulatorParticipants.participant))
                .limit(who)
            ).map((r) => r.participant)
          : [...new Set(who)].filter((p) => p !== own);
      if (leaving.length === 0) return [];
      const gone = await tx
        .delete(simulatorParticipants)
        .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, leaving)))
        .returning({ participant: simulatorParticipants.participant });
      const goneSet = new Set(gone.map((r) => r.participant));
      return leaving.filter((p) => goneSet.has(p));
    });
    if (left.length > 0) await this.events.emit({ type: "group_participants", channelId, groupId, action: "leave", participants: left, at });
    return { left, members: await this.size(groupId) };
  }

  /**
   * Control: an admin on a phone makes these members admins (those not in the group are skipped); returns who
   * was promoted. No participant event (the service follows joins and leaves only).
   */
  async promoteMembers(groupId: string, who: string[]) {
    const rows = await this.db
      .update(simulatorParticipants)
      .set({ admin: true })
      .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, [...new Set(who)])))
      .returning({ participant: simulatorParticipants.participant });
    return rows.map((r) => r.participant);
  }

  /** Control: a group admin on the phone revoked the link (a new one is made at once, as WhatsApp does). */
  async revokeInvite(channelId: string, groupId: string) {
    await this.groupRow(channelId, groupId);
    const { code, revoked } = await this.replaceInvite(channelId, groupId);
    return { inviteUrl: INVITE_PREFIX + code, revoked: revoked.map((c) => INVITE_PREFIX + c) };
  }

  /**
   * Control: the group vanished for the number (`exists: false`: the number is out of it; `true` brings
   * it back as admin) and/or the number lost (or got back) admin rights. No participant event.
   */
  async setGroupState(channelId: string, groupId: string, state: { exists?: boolean; admin?: boolean }) {
    await this.groupRow(channelId, groupId);
    const own = simulatedOwnNumber(channelId);
    const where = and(eq(simulatorParticipants.groupId, groupId), eq(simulatorParticipants.participant, own));
    if (state.exists === false) await this.db.delete(simulatorParticipants).where(where);
    if (state.exists === true) {
      await this.db
        .insert(simulatorParticipants)
        .values({ groupId, channelId, participant: own, admin: state.admin ?? true, joinedAt: new Date() })
        .onConflictDoNothing();
    }
    if (state.admin !== undefined && state.exists !== false) await this.db.update(simulatorParticipants).set({ admin: state.admin }).where(where);
    const membership = await this.ownMembership(channelId, groupId);
    return { exists: membership !== undefined, admin: membership?.admin ?? false, members: await this.size(groupId) };
  }

  /** Control and tests: everyone in the group, oldest first. */
  async participants(groupId: string) {
    return this.db
      .select({ participant: simulatorParticipants.participant, admin: simulatorParticipants.admin, joinedAt: simulatorParticipants.joinedAt })
      .from(simulatorParticipants)
      .where(eq(simulatorParticipants.groupId, groupId))
      .orderBy(asc(simulatorParticipants.joinedAt), asc(simulatorParticipants.participant));
  }

  subscribe(listener: ProviderListener) {
    return this.events.subscribe(listener);
  }

  async createChannel(channel: { id: string; name: string }) {
    const pairsAt = new Date(Date.now() + this.opts.pairingMs);
    await this.db.insert(simulatorChannels).values({ channelId: channel.id, pairsAt }).onConflictDoNothing();
    if (this.opts.pairingMs > 0) setTimeout(() => void this.pairDue(), this.opts.pairingMs).unref?.();
    else await this.pairDue(pairsAt);
    return { ref: `sim-${channel.id.slice("channel_".length, "channel_".length + 8)}`, status: await this.getStatus(channel.id) };
  }

  /** Pairs every channel whose pairing time has come; also run at start for channels left mid-pairing. */
  async pairDue(now = new Date()) {
    const paired = await this.db
      .update(simulatorChannels)
      .set({ paired: true })
      .where(and(eq(simulatorChannels.paired, false), lte(simulatorChannels.pairsAt, now)))
      .returning({ channelId: simulatorChannels.channelId, online: simulatorChannels.online });
    for (const ch of paired) {
      await this.events.emit({ type: "channel_status", channelId: ch.channelId, status: ch.online ? "connected" : "disconnected", at: now });
    }
  }

  private async channel(channelId: string) {
    const [row] = await this.db.select().from(simulatorChannels).where(eq(simulatorChannels.channelId, channelId));
    return row;
  }

  async getStatus(channelId: string): Promise<ChannelStatus> {
    const row = await this.channel(channelId);
    if (!row) throw new ProviderUnavailableError(`Channel ${channelId} is unknown to the platform.`);
    if (!row.paired) return "connecting";
    return row.online ? "connected" : "disconnected";
  }

  /**
   * The derived groups (`Grupo nn`), then the groups the channel made or whose member its number is (another
   * channel's groups it joined), oldest first; a group the number is no longer in (state `exists: false`, a
   * leave) is not listed.
   */
  async listGroups(channelId: string): Promise<ProviderGroup[]> {
    const status = await this.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: its groups cannot be queried.`);
    const own = simulatedOwnNumber(channelId);
    const rows = await this.db
      .select({
        groupId: simulatorGroups.groupId,
        name: simulatorGroups.name,
        adminsOnly: simulatorGroups.adminsOnly,
        // Spelled out: drizzle may leave the outer column unqualified, which the subquery would take as its own.
        present: sql<boolean>`exists (select 1 from simulator_participants p where p.id_group = simulator_groups.id_group and p.participant = ${own})`,
      })
      .from(simulatorGroups)
      .where(
        or(
          eq(simulatorGroups.channelId, channelId),
          sql`exists (select 1 from simulator_participants p where p.id_group = simulator_groups.id_group and p.participant = ${own})`,
        ),
      )
      .orderBy(asc(simulatorGroups.createdAt), asc(simulatorGroups.groupId));
    const known = new Map(rows.map((r) => [r.groupId, r]));
    const derived = this.groupsOf(channelId);
    const derivedIds = new Set(derived.map((g) => g.id_group));
    return [
      ...derived.filter((g) => known.get(g.id_group)?.present !== false),
      ...rows.filter((r) => r.present && !derivedIds.has(r.groupId)).map((r) => ({ id_group: r.groupId, name: r.name, adminsOnly: r.adminsOnly })),
    ];
  }

  async pairing(channelId: string): Promise<PairingInfo> {
    return { status: await this.getStatus(channelId), qrCode: null, pairingCode: null, automatic: true };
  }

  /** A logout ends the session, as on WhatsApp: the channel disconnects as `logged_out` and must be paired again. */
  async disconnectChannel(channelId: string) {
    await this.setHealth(channelId, "logged_out");
  }

  async deleteChannel(channelId: string) {
    await this.db.delete(simulatorChannels).where(eq(simulatorChannels.channelId, channelId));
    await this.db.delete(simulatorFailures).where(eq(simulatorFailures.channelId, channelId));
    await this.db.delete(simulatorGroupCreateLimits).where(eq(simulatorGroupCreateLimits.channelId, channelId));
    await this.db.delete(simulatorInvites).where(eq(simulatorInvites.channelId, channelId));
    await this.db.delete(simulatorParticipants).where(eq(simulatorParticipants.channelId, channelId));
    await this.db.delete(simulatorGroups).where(eq(simulatorGroups.channelId, channelId));
  }

  /**
   * Control: take a channel offline or bring it back; emits the status change. Back online after a logout, a ban
   * or a restriction is the number paired again: the reason is cleared.
   */
  async setOnline(channelId: string, online: boolean) {
    const [row] = await this.db
      .update(simulatorChannels)
      .set(online ? { online, health: null } : { online })
      .where(eq(simulatorChannels.channelId, channelId))
      .returning();
    if (!row) return false;
    if (row.paired) {
      await this.events.emit({ type: "channel_status", channelId, status: online ? "connected" : "disconnected", at: new Date() });
    }
    return true;
  }

  /**
   * Control: the platform takes the number off (a logout, a ban, a restriction): the channel disconnects and
   * its status event carries the reason, as a gateway's close event does. Sends then fail as offline, and list-groups
   * answers unavailable, until `setOnline(channelId, true)` (the number paired again).
   */
  async setHealth(channelId: string, reason: NumberLossReason) {
    const [row] = await this.db.update(simulatorChannels).set({ online: false, health: reason }).where(eq(simulatorChannels.channelId, channelId)).returning();
    if (!row) return false;
    if (row.paired) {
      await this.events.emit({ type: "channel_status", channelId, status: "disconnected", reason, detail: `simulator: ${reason}`, at: new Date() });
    }
    return true;
  }

  /** Control: the platform's rate limit for the channel's sends (null: none); sends past it in a rolling minute are refused. */
  async setRateLimit(channelId: string, perMinute: number | null) {
    const [row] = await this.db
      .update(simulatorChannels)
      .set({ rateLimitPerMinute: perMinute })
      .where(eq(simulatorChannels.channelId, channelId))
      .returning({ channelId: simulatorChannels.channelId });
    return row !== undefined;
  }

  /** Control: the channel's simulated state, as the state endpoint answers it. */
  async channelControls(channelId: string) {
    const row = await this.channel(channelId);
    return row && { connected: row.paired && row.online, health: row.health, rateLimitPerMinute: row.rateLimitPerMinute };
  }

  /** The groups a channel exposes (the same whatever its state). */
  groupsOf(channelId: string) {
    return simulatedGroups(channelId, this.opts.groupsPerChannel);
  }

  /** One of the channel's derived groups, or undefined (without building groupsOf's list). */
  derivedGroup(channelId: string, groupId: string) {
    return derivedGroup(channelId, groupId, this.opts.groupsPerChannel);
  }

  /** Control: injected failures for sends to one group through one channel (the caller's own). */
  async setFailures(channelId: string, groupId: string, spec: { failNext?: number; always?: boolean }) {
    const set = { failNext: spec.failNext ?? 0, always: spec.always ?? false };
    await this.db
      .insert(simulatorFailures)
      .values({ channelId, groupId, ...set })
      .onConflictDoUpdate({ target: [simulatorFailures.channelId, simulatorFailures.groupId], set });
  }

  /** Control: per-send latency of one tenant's channels (the others are not slowed). */
  async setLatency(tenantId: string, ms: number) {
    await this.db
      .insert(simulatorLatency)
      .values({ tenantId, latencyMs: ms })
      .onConflictDoUpdate({ target: simulatorLatency.tenantId, set: { latencyMs: ms } });
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const [outcome] = await this.sendMany([message]);
    if (!outcome.ok) throw outcome.error;
    return outcome.receipt;
  }

  /**
   * A loop's messages in one statement: the channels' states, the keys already sent (dedupe), which messages'
   * senders are not in their group, and the insert of the rest; a channel with an injected failure armed or a
   * rate limit set takes a second path (consume the failures, count the minute's sends, then insert).
   * Latency applies per message, as a real gateway's would, between the insert and the answer: the message is
   * in the log (findSent finds it) while the answer is on its way.
   */
  async sendMany(messages: OutboundMessage[], options: SendManyOptions = {}): Promise<SendOutcome[]> {
    if (messages.length === 0) return [];
    if (options.signal?.aborted) return messages.map(notSent);
    const senders = new Map<string, Sender>();
    const senderOf = (channelId: string) => {
      let sender = senders.get(channelId);
      if (!sender) {
        sender = { own: simulatedOwnNumber(channelId), derived: (groupId) => this.derivedGroup(channelId, groupId) !== undefined };
        senders.set(channelId, sender);
      }
      return sender;
    };
    const rows = messages.map((m) => messageRow(m, senderOf(m.channelId)));
    const [{ states, existing, unreached, inserted }] = rowsOf<{
      states: ChannelState[] | null;
      existing: SentRow[] | null;
      unreached: string[] | null;
      inserted: SentRow[] | null;
    }>(
      await this.db.execute(sql`with v as (${messageValues(rows)}),
        st as (
          select sc.channel_id as "channelId", sc.paired and sc.online as online, coalesce(l.latency_ms, 0) as "latencyMs",
                 sc.rate_limit_per_minute is not null
                   or exists (select 1 from ${simulatorFailures} f where f.id_channel = sc.channel_id and (f.always or f.fail_next > 0)) as armed,
                 sc.rate_limit_per_minute as "rateLimitPerMinute"
          from ${simulatorChannels} sc left join ${channels} ch on ch.id = sc.channel_id left join ${simulatorLatency} l on l.tenant_id = ch.tenant_id
          where sc.channel_id = any(array(select distinct v.id_channel from v))),
        ex as (
          select m.delivery_key as "deliveryKey", m.id_channel as "channelId", m.message_id as "messageId", m.sent_at as "sentAt"
          from ${simulatorMessages} m where m.delivery_key = any(array(select v.delivery_key from v))),
        un as (select v.delivery_key from v where not ${reachesSql}),
        ins as (
          insert into ${simulatorMessages} ${messageColumns}
          select ${messageFields()} from v join st on st."channelId" = v.id_channel
          where st.online and not st.armed and not exists (select 1 from ex where ex."deliveryKey" = v.delivery_key)
            and not exists (select 1 from un where un.delivery_key = v.delivery_key)
          on conflict do nothing
          ${sentReturning})
        select (select json_agg(st) from st) as states, (select json_agg(ex) from ex) as existing,
               (select json_agg(un.delivery_key) from un) as unreached, (select json_agg(ins) from ins) as inserted`),
    );
    const state = new Map((states ?? []).map((c) => [c.channelId, c]));
    const known = new Map((existing ?? []).map((r) => [r.deliveryKey, r]));
    const outside = new Set(unreached ?? []);
    const outcomes = new Map<string, SendOutcome>((inserted ?? []).map((r) => [r.deliveryKey, sentOutcome(r)]));
    const ms = messages.reduce((sum, m) => sum + (state.get(m.channelId)?.latencyMs ?? 0), 0);

    const armed: OutboundMessage[] = [];
    const lost: string[] = [];
    for (const m of messages) {
      if (outcomes.has(m.deliveryKey)) continue;
      const previous = known.get(m.deliveryKey);
      const channel = state.get(m.channelId);
      if (previous && (previous.channelId === m.channelId || channel?.online)) {
        // A real gateway would have delivered it twice: say so (the two-process test counts these lines).
        console.warn(`[simulator] repeated send of delivery key ${m.deliveryKey}`);
        outcomes.set(m.deliveryKey, sentOutcome(previous));
      } else if (!channel?.online) outcomes.set(m.deliveryKey, { ok: false, error: new ProviderUnavailableError(`Channel ${m.channelId} is not connected.`) });
      else if (outside.has(m.deliveryKey)) {
        // WhatsApp answers a send to a group the number is not in (or may not post in) with "forbidden".
        const error = new ProviderSendError(
          `forbidden: the number of channel ${m.channelId} is not a participant of ${m.groupId} (or not an admin where only admins post).`,
          false,
        );
        outcomes.set(m.deliveryKey, { ok: false, error });
      } else if (channel.armed) armed.push(m);
      // A concurrent send under the same key won the insert: answered below with its receipt.
      else lost.push(m.deliveryKey);
    }
    if (armed.length > 0) {
      const failing = new Set(await this.consumeFailures(armed));
      const toInsert = armed.filter((m) => {
        if (!failing.has(failureKey(m))) return true;
        outcomes.set(m.deliveryKey, { ok: false, error: new ProviderSendError(`Simulated failure sending to ${m.groupId}.`, true) });
        return false;
      });
      const limited = toInsert.filter((m) => state.get(m.channelId)?.rateLimitPerMinute != null);
      const free = toInsert.filter((m) => state.get(m.channelId)?.rateLimitPerMinute == null);
      const stored = [...(await this.insertMessages(rows, free)), ...(await this.insertWithinRate(rows, limited, outcomes))];
      for (const r of stored) outcomes.set(r.deliveryKey, sentOutcome(r));
      lost.push(...toInsert.filter((m) => !outcomes.has(m.deliveryKey)).map((m) => m.deliveryKey));
    }
    if (lost.length > 0) {
      for (const key of lost) console.warn(`[simulator] repeated send of delivery key ${key}`);
      for (const r of await this.sentByKey(lost)) outcomes.set(r.deliveryKey, sentOutcome(r));
    }
    const repeated = new Set(lost);
    const receipts = messages.flatMap((m) => {
      const o = outcomes.get(m.deliveryKey);
      const fresh = o?.ok && !known.has(m.deliveryKey) && !repeated.has(m.deliveryKey);
      return fresh ? [{ channelId: m.channelId, deliveryKey: m.deliveryKey, messageId: o.receipt.messageId }] : [];
    });
    // Accepted and stored first, answered late (as a gateway that sends and then answers): a sender
    // that dies meanwhile leaves a message the platform has and the sender has not recorded.
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    // Receipts come later and on their own: a failure (a lost connection, say) is logged, never an unhandled rejection.
    if (receipts.length > 0) void this.deliverReceipts(receipts).catch((err) => console.error("[simulator] could not record receipts", err));
    return messages.map((m) => outcomes.get(m.deliveryKey)!);
  }

  /** Stores these messages (those whose key is already in the log are left out); returns what was stored. */
  private async insertMessages(rows: ReturnType<typeof messageRow>[], messages: OutboundMessage[], db: Pick<Db, "execute"> = this.db, sentAt?: SQL) {
    if (messages.length === 0) return [];
    const keys = new Set(messages.map((m) => m.deliveryKey));
    return rowsOf<SentRow>(
      await db.execute(sql`insert into ${simulatorMessages} ${messageColumns}
        select ${messageFields(sentAt)} from (${messageValues(rows.filter((r) => keys.has(r.delivery_key)))}) as v
        on conflict do nothing
        ${sentReturning}`),
    );
  }

  /**
   * The platform's rate limit (`rate_limit_per_minute`): per channel, no more than N messages in any rolling
   * minute of the log. The channels' rows are locked while their last minute is counted and the allowed
   * messages are stored (stamped with the clock read under the lock), so two senders cannot both take the
   * last place; the rest are refused as WhatsApp's rate-overlimit (transient, rateLimited).
   */
  private async insertWithinRate(rows: ReturnType<typeof messageRow>[], messages: OutboundMessage[], outcomes: Map<string, SendOutcome>) {
    if (messages.length === 0) return [];
    const channelIds = [...new Set(messages.map((m) => m.channelId))].sort();
    return this.db.transaction(async (tx) => {
      const locked = await tx
        .select({ channelId: simulatorChannels.channelId, limit: simulatorChannels.rateLimitPerMinute })
        .from(simulatorChannels)
        .where(inArray(simulatorChannels.channelId, channelIds))
        .orderBy(asc(simulatorChannels.channelId))
        .for("update");
      const [{ now }] = rowsOf<{ now: string | Date }>(await tx.execute(sql`select clock_timestamp() as now`));
      const at = new Date(now);
      const recent = await tx
        .select({ channelId: simulatorMessages.channelId, n: count() })
        .from(simulatorMessages)
        .where(and(inArray(simulatorMessages.channelId, channelIds), gt(simulatorMessages.sentAt, new Date(at.getTime() - 60_000))))
        .groupBy(simulatorMessages.channelId);
      const room = new Map(locked.map((c) => [c.channelId, c.limit === null ? Number.POSITIVE_INFINITY : c.limit]));
      for (const r of recent) room.set(r.channelId, (room.get(r.channelId) ?? 0) - r.n);
      const allowed = messages.filter((m) => {
        const left = room.get(m.channelId) ?? 0;
        if (left > 0) {
          room.set(m.channelId, left - 1);
          return true;
        }
        const error = new ProviderSendError(
          `rate-overlimit: channel ${m.channelId} sent its ${locked.find((c) => c.channelId === m.channelId)?.limit} messages of this minute.`,
          true,
          { rateLimited: true },
        );
        outcomes.set(m.deliveryKey, { ok: false, error });
        return false;
      });
      return this.insertMessages(rows, allowed, tx, sql`${at.toISOString()}::timestamptz`);
    });
  }

  /** Consumes one injected failure for each (channel, group) that has one; returns their failureKeys. */
  private async consumeFailures(messages: OutboundMessage[]) {
    const channelIds = [...new Set(messages.map((m) => m.channelId))];
    const armedOn = and(inJson(simulatorFailures.channelId, channelIds), sql`(${simulatorFailures.always} or ${simulatorFailures.failNext} > 0)`);
    // Read first: almost always nothing is injected on these channels, and a read costs no commit.
    const armed = await this.db.select({ channelId: simulatorFailures.channelId, groupId: simulatorFailures.groupId }).from(simulatorFailures).where(armedOn);
    const wanted = new Set(messages.map(failureKey));
    const hit = armed.filter((r) => wanted.has(failureKey(r)));
    if (hit.length === 0) return [];
    const rows = await this.db
      .update(simulatorFailures)
      .set({ failNext: sql`greatest(${simulatorFailures.failNext} - 1, 0)` })
      .where(and(armedOn, inJson(sql`${simulatorFailures.channelId} || ' ' || ${simulatorFailures.groupId}`, hit.map(failureKey))))
      .returning({ channelId: simulatorFailures.channelId, groupId: simulatorFailures.groupId });
    return rows.map(failureKey);
  }

  private async sentByKey(keys: string[]) {
    return this.db
      .select({
        deliveryKey: simulatorMessages.deliveryKey,
        channelId: simulatorMessages.channelId,
        messageId: simulatorMessages.messageId,
        sentAt: simulatorMessages.sentAt,
      })
      .from(simulatorMessages)
      .where(inJson(simulatorMessages.deliveryKey, keys));
  }

  /**
   * Every message is acked at once; a deterministic share is also read, a moment later: the reads of all
   * channels are gathered for readDelayMs and marked together (people read in their own time, and a loop
   * of one message would otherwise pay an UPDATE of its own).
   */
  private async deliverReceipts(receipts: Receipt[]) {
    await this.events.emit({ type: "message_ack", receipts, at: new Date() });
    const read = receipts.filter((r) => isRead(r.deliveryKey));
    if (read.length === 0) return;
    this.unread.push(...read);
    this.readTimer ??= setTimeout(() => void this.markRead().catch((err) => console.error("[simulator] could not record reads", err)), readDelayMs);
    this.readTimer.unref?.();
  }

  private async markRead() {
    this.readTimer = undefined;
    const read = this.unread;
    this.unread = [];
    const at = new Date();
    await this.db
      .update(simulatorMessages)
      .set({ readAt: at })
      .where(
        inJson(
          simulatorMessages.deliveryKey,
          read.map((r) => r.deliveryKey),
        ),
      );
    await this.events.emit({ type: "message_read", receipts: read, at });
  }

  /** The simulator's log is written in the send's transaction: what is not there never went out. */
  async findSent({ channelId, deliveryKey }: SentLookup): Promise<LookupResult> {
    const [row] = await this.sentByKey([deliveryKey]);
    return row && row.channelId === channelId ? { kind: "sent", receipt: { messageId: row.messageId, sentAt: row.sentAt } } : { kind: "absent" };
  }

  /** The durable message log, for the inspection endpoint. */
  async messages(filter: { channelIds: string[]; groupId?: string; campaignId?: string; after?: Date }) {
    if (filter.channelIds.length === 0) return [];
    return this.db
      .select()
      .from(simulatorMessages)
      .where(
        and(
          inArray(simulatorMessages.channelId, filter.channelIds),
          filter.groupId ? eq(simulatorMessages.groupId, filter.groupId) : undefined,
          filter.campaignId ? eq(simulatorMessages.campaignId, filter.campaignId) : undefined,
          filter.after ? gt(simulatorMessages.sentAt, filter.after) : undefined,
        ),
      )
      .orderBy(simulatorMessages.sentAt);
  }
}
