import { createHash, hash, randomUUID } from "node:crypto";
import { and, asc, count, gt, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { inJson, rowsOf } from "../../../db/params";
import {
  channels,
  simulatorChannels,
  simulatorFailures,
  simulatorGroups,
  simulatorLatency,
  simulatorMessages,
  simulatorParticipants,
} from "../../../db/schema";
import {
  type LookupResult,
  notSent,
  type OutboundMessage,
  ProviderSendError,
  ProviderUnavailableError,
  type Receipt,
  type SendManyOptions,
  type SendOutcome,
  type SentLookup,
} from "../provider";
import type { SimulatedPlatform, SimulatorContext } from "./platform";
import { simulatedOwnNumber } from "./simulated";

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
    text: c.type === "text" || c.type === "carousel" ? c.text : c.type === "poll" ? c.poll.question : c.caption,
    media_url: c.type === "text" || c.type === "carousel" || c.type === "poll" ? null : c.mediaUrl,
    file_name: c.type === "document" ? (c.fileName ?? null) : null,
    cards: c.type === "carousel" ? c.cards : null,
    poll: c.type === "poll" ? c.poll : null,
    mention_all: message.mentionAll,
    mentions: message.mentions?.length ? message.mentions : null,
    link_preview: message.linkPreview !== false,
  };
}

/** A loop's message rows as one JSON parameter (a VALUES list would bind a dozen parameters per row). */
const messageValues = (rows: ReturnType<typeof messageRow>[]) =>
  sql`select * from json_to_recordset(${JSON.stringify(rows)}::json) as v(delivery_key text, message_id text, id_channel text, id_group text,
        id_campaign text, message_type text, text text, media_url text, file_name text, cards jsonb, poll jsonb, mention_all boolean, mentions jsonb, link_preview boolean,
        own_number text, derived boolean)`;

const messageColumns = sql.raw(
  "(delivery_key, message_id, id_channel, id_group, id_campaign, message_type, text, media_url, file_name, cards, poll, mention_all, mentions, link_preview, sent_at, read_at)",
);

const messageFields = (sentAt: SQL = sql`now()`) =>
  sql`v.delivery_key, v.message_id, v.id_channel, v.id_group, v.id_campaign, v.message_type, v.text, v.media_url, v.file_name, v.cards, v.poll, v.mention_all, v.mentions, v.link_preview, ${sentAt}, null::timestamptz`;

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

/** Reads are marked this long after the acks, all channels' together (SimulatedSends.deliverReceipts). */
const readDelayMs = 100;

/** A deterministic share of messages (3 in 10) is read, a moment after it is sent. */
// One-shot hash: the same digest as createHash's without a Hash object per message (a loop marks 100).
const isRead = (deliveryKey: string) => hash("sha256", deliveryKey, "buffer")[0] % 10 < 3;

/** Sends (a loop's messages in one statement), their receipts, and the look-up of a send. */
export class SimulatedSends {
  /** Read receipts waiting for markRead. */
  private unread: Receipt[] = [];
  private readTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: SimulatorContext,
    private readonly platform: SimulatedPlatform,
  ) {}

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
        sender = { own: simulatedOwnNumber(channelId), derived: (groupId) => this.platform.derivedGroup(channelId, groupId) !== undefined };
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
      await this.ctx.db.execute(sql`with v as (${messageValues(rows)}),
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
          { notInGroup: true },
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
  async insertMessages(rows: ReturnType<typeof messageRow>[], messages: OutboundMessage[], db: Pick<Db, "execute"> = this.ctx.db, sentAt?: SQL) {
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
   * minute of the log (`rateWindowMs`, shortened by tests). The channels' rows are locked while their last minute is counted and the allowed
   * messages are stored (stamped with the clock read under the lock), so two senders cannot both take the
   * last place; the rest are refused as WhatsApp's rate-overlimit (transient, rateLimited).
   */
  async insertWithinRate(rows: ReturnType<typeof messageRow>[], messages: OutboundMessage[], outcomes: Map<string, SendOutcome>) {
    if (messages.length === 0) return [];
    const channelIds = [...new Set(messages.map((m) => m.channelId))].sort();
    return this.ctx.db.transaction(async (tx) => {
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
        .where(
          and(inArray(simulatorMessages.channelId, channelIds), gt(simulatorMessages.sentAt, new Date(at.getTime() - (this.ctx.opts.rateWindowMs ?? 60_000)))),
        )
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
  async consumeFailures(messages: OutboundMessage[]) {
    const channelIds = [...new Set(messages.map((m) => m.channelId))];
    const armedOn = and(inJson(simulatorFailures.channelId, channelIds), sql`(${simulatorFailures.always} or ${simulatorFailures.failNext} > 0)`);
    // Read first: almost always nothing is injected on these channels, and a read costs no commit.
    const armed = await this.ctx.db
      .select({ channelId: simulatorFailures.channelId, groupId: simulatorFailures.groupId })
      .from(simulatorFailures)
      .where(armedOn);
    const wanted = new Set(messages.map(failureKey));
    const hit = armed.filter((r) => wanted.has(failureKey(r)));
    if (hit.length === 0) return [];
    const rows = await this.ctx.db
      .update(simulatorFailures)
      .set({ failNext: sql`greatest(${simulatorFailures.failNext} - 1, 0)` })
      .where(and(armedOn, inJson(sql`${simulatorFailures.channelId} || ' ' || ${simulatorFailures.groupId}`, hit.map(failureKey))))
      .returning({ channelId: simulatorFailures.channelId, groupId: simulatorFailures.groupId });
    return rows.map(failureKey);
  }

  async sentByKey(keys: string[]) {
    return this.ctx.db
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
  async deliverReceipts(receipts: Receipt[]) {
    await this.ctx.events.emit({ type: "message_ack", receipts, at: new Date() });
    const read = receipts.filter((r) => isRead(r.deliveryKey));
    if (read.length === 0) return;
    this.unread.push(...read);
    this.readTimer ??= setTimeout(() => void this.markRead().catch((err) => console.error("[simulator] could not record reads", err)), readDelayMs);
    this.readTimer.unref?.();
  }

  async markRead() {
    this.readTimer = undefined;
    const read = this.unread;
    this.unread = [];
    const at = new Date();
    await this.ctx.db
      .update(simulatorMessages)
      .set({ readAt: at })
      .where(
        inJson(
          simulatorMessages.deliveryKey,
          read.map((r) => r.deliveryKey),
        ),
      );
    await this.ctx.events.emit({ type: "message_read", receipts: read, at });
  }

  /** The simulator's log is written in the send's transaction: what is not there never went out. */
  async findSent({ channelId, deliveryKey }: SentLookup): Promise<LookupResult> {
    const [row] = await this.sentByKey([deliveryKey]);
    return row && row.channelId === channelId ? { kind: "sent", receipt: { messageId: row.messageId, sentAt: row.sentAt } } : { kind: "absent" };
  }
}
