import { createHash, randomUUID } from "node:crypto";
import { and, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJson } from "../../db/params";
import { channels, simulatorChannels, simulatorFailures, simulatorLatency, simulatorMessages } from "../../db/schema";
import {
  notSent,
  ProviderEvents,
  ProviderSendError,
  ProviderUnavailableError,
  type ChannelStatus,
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
} from "./provider";

export interface SimulatorOptions {
  pairingMs: number;
  groupsPerChannel: number;
}

/** Stable `<digits>@g.us` ids derived from the channel id: the same channel always has the same groups. */
export function simulatedGroups(channelId: string, count: number): ProviderGroup[] {
  const digest = createHash("sha256").update(channelId).digest();
  const base = (digest.readBigUInt64BE(0) % 10_000_000_000n).toString().padStart(10, "0");
  const width = Math.max(2, String(count).length);
  return Array.from({ length: count }, (_, i) => {
    const n = String(i + 1).padStart(width, "0");
    return { id_group: `120363${base}${n}@g.us`, name: `Grupo ${n}` };
  });
}

/** An injected failure's key: channel and group (ids hold no spaces). */
const failureKey = (m: { channelId: string; groupId: string }) => `${m.channelId} ${m.groupId}`;

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

  constructor(
    private readonly db: Db,
    private readonly opts: SimulatorOptions,
  ) {}

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

  async listGroups(channelId: string) {
    const status = await this.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: its groups cannot be queried.`);
    return simulatedGroups(channelId, this.opts.groupsPerChannel);
  }

  async pairing(channelId: string): Promise<PairingInfo> {
    return { status: await this.getStatus(channelId), qrCode: null, pairingCode: null, automatic: true };
  }

  async disconnectChannel(channelId: string) {
    await this.setOnline(channelId, false);
  }

  async deleteChannel(channelId: string) {
    await this.db.delete(simulatorChannels).where(eq(simulatorChannels.channelId, channelId));
    await this.db.delete(simulatorFailures).where(eq(simulatorFailures.channelId, channelId));
  }

  /** Control: take a channel offline or bring it back; emits the status change. */
  async setOnline(channelId: string, online: boolean) {
    const [row] = await this.db.update(simulatorChannels).set({ online }).where(eq(simulatorChannels.channelId, channelId)).returning();
    if (!row) return false;
    if (row.paired) {
      await this.events.emit({ type: "channel_status", channelId, status: online ? "connected" : "disconnected", at: new Date() });
    }
    return true;
  }

  /** The groups a channel exposes (the same whatever its state). */
  groupsOf(channelId: string) {
    return simulatedGroups(channelId, this.opts.groupsPerChannel);
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
   * A loop's messages in a handful of queries: channel states, already-sent keys (dedupe), injected
   * failures, then one insert. Latency applies per message, as a real gateway's would, between the
   * insert and the answer: the message is in the log (findSent finds it) while the answer is on its way.
   */
  async sendMany(messages: OutboundMessage[], options: SendManyOptions = {}): Promise<SendOutcome[]> {
    if (messages.length === 0) return [];
    if (options.signal?.aborted) return messages.map(notSent);
    const channelIds = [...new Set(messages.map((m) => m.channelId))];
    // Each channel's state, its tenant's latency and whether a failure is injected on it, in the one query a
    // loop already made (a loop makes the failures' own query only on a channel that has one armed).
    const states = await this.db
      .select({
        channelId: simulatorChannels.channelId,
        paired: simulatorChannels.paired,
        online: simulatorChannels.online,
        latencyMs: simulatorLatency.latencyMs,
        armed: sql<boolean>`exists (select 1 from ${simulatorFailures} f where f.id_channel = ${simulatorChannels.channelId} and (f.always or f.fail_next > 0))`,
      })
      .from(simulatorChannels)
      .leftJoin(channels, eq(channels.id, simulatorChannels.channelId))
      .leftJoin(simulatorLatency, eq(simulatorLatency.tenantId, channels.tenantId))
      .where(inArray(simulatorChannels.channelId, channelIds));
    const latency = new Map(states.map((c) => [c.channelId, c.latencyMs ?? 0]));
    const ms = messages.reduce((sum, m) => sum + (latency.get(m.channelId) ?? 0), 0);
    const online = new Set(states.filter((c) => c.paired && c.online).map((c) => c.channelId));
    const keys = messages.map((m) => m.deliveryKey);
    const known = new Map((await this.sentByKey(keys)).map((r) => [r.deliveryKey, r]));

    const outcomes = new Map<string, SendOutcome>();
    const fresh: OutboundMessage[] = [];
    for (const m of messages) {
      const existing = known.get(m.deliveryKey);
      if (existing && existing.channelId === m.channelId) {
        // A real gateway would have delivered it twice: say so (the two-process test counts these lines).
        console.warn(`[simulator] repeated send of delivery key ${m.deliveryKey}`);
        outcomes.set(m.deliveryKey, { ok: true, receipt: existing });
      } else if (!online.has(m.channelId))
        outcomes.set(m.deliveryKey, { ok: false, error: new ProviderUnavailableError(`Channel ${m.channelId} is not connected.`) });
      else fresh.push(m);
    }
    const armed = new Set(states.filter((c) => c.armed).map((c) => c.channelId));
    const mayFail = fresh.filter((m) => armed.has(m.channelId));
    const failing = new Set(mayFail.length ? await this.consumeFailures(mayFail) : []);
    const toInsert = fresh.filter((m) => {
      if (!failing.has(failureKey(m))) return true;
      outcomes.set(m.deliveryKey, { ok: false, error: new ProviderSendError(`Simulated failure sending to ${m.groupId}.`, true) });
      return false;
    });
    if (toInsert.length > 0) {
      // The loop's rows travel as one JSON parameter (a VALUES list would bind a dozen parameters per row).
      const rows = JSON.stringify(toInsert.map((m) => this.row(m)));
      const inserted = await this.db
        .insert(simulatorMessages)
        .select(
          sql`select v.delivery_key, v.message_id, v.id_channel, v.id_group, v.id_campaign, v.message_type, v.text, v.media_url, v.file_name,
                     v.cards, v.mention_all, v.link_preview, now(), null::timestamptz
              from json_to_recordset(${rows}::json) as v(delivery_key text, message_id text, id_channel text, id_group text, id_campaign text,
                     message_type text, text text, media_url text, file_name text, cards jsonb, mention_all boolean, link_preview boolean)`,
        )
        .onConflictDoNothing()
        .returning({ deliveryKey: simulatorMessages.deliveryKey, messageId: simulatorMessages.messageId, sentAt: simulatorMessages.sentAt });
      // A concurrent send under the same key won the insert: answer with its receipt.
      const lost = toInsert.filter((m) => !inserted.some((r) => r.deliveryKey === m.deliveryKey)).map((m) => m.deliveryKey);
      for (const key of lost) console.warn(`[simulator] repeated send of delivery key ${key}`);
      for (const r of [...inserted, ...(lost.length ? await this.sentByKey(lost) : [])]) {
        outcomes.set(r.deliveryKey, { ok: true, receipt: { messageId: r.messageId, sentAt: r.sentAt } });
      }
      const receipts = toInsert.map((m) => ({
        channelId: m.channelId,
        deliveryKey: m.deliveryKey,
        messageId: (outcomes.get(m.deliveryKey) as { receipt: SendReceipt }).receipt.messageId,
      }));
      // Accepted and stored first, answered late (as a gateway that sends and then answers): a sender
      // that dies meanwhile leaves a message the platform has and the sender has not recorded.
      if (ms > 0) await new Promise((r) => setTimeout(r, ms));
      // Receipts come later and on their own: a failure (a lost connection, say) is logged, never an unhandled rejection.
      void this.deliverReceipts(receipts).catch((err) => console.error("[simulator] could not record receipts", err));
    } else if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    return messages.map((m) => outcomes.get(m.deliveryKey)!);
  }

  /** A message log row, keyed by column name. */
  private row(message: OutboundMessage) {
    const c = message.content;
    return {
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

  /** Every message is acked; a deterministic share is also read, a moment later. */
  private async deliverReceipts(receipts: Receipt[]) {
    await this.events.emit({ type: "message_ack", receipts, at: new Date() });
    const read = receipts.filter((r) => isRead(r.deliveryKey));
    if (read.length === 0) return;
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
