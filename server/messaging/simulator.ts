import { createHash, randomUUID } from "node:crypto";
import { and, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { simulatorChannels, simulatorConfig, simulatorFailures, simulatorMessages } from "../../db/schema";
import {
  ProviderSendError,
  ProviderUnavailableError,
  type ChannelStatus,
  type MessagingProvider,
  type OutboundMessage,
  type ProviderEvent,
  type ProviderGroup,
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

/** A deterministic share of messages (3 in 10) is read, a moment after it is sent. */
const isRead = (deliveryKey: string) => createHash("sha256").update(deliveryKey).digest()[0] % 10 < 3;

/**
 * The simulated chat platform: durable (its state is in the service's database, so it survives
 * restarts like a real gateway would), deduplicating sends by delivery key.
 */
export class SimulatorProvider implements MessagingProvider {
  readonly name = "simulator" as const;
  readonly capabilities = { carousel: true, forward: true, linkPreview: true, mentionAll: true };
  private listeners = new Set<(event: ProviderEvent) => Promise<void> | void>();
  private latencyMs: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly opts: SimulatorOptions,
  ) {}

  subscribe(listener: (event: ProviderEvent) => Promise<void> | void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async emit(event: ProviderEvent) {
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (err) {
        console.error("[simulator] event listener failed", err);
      }
    }
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
      await this.emit({ type: "channel_status", channelId: ch.channelId, status: ch.online ? "connected" : "disconnected", at: now });
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

  /** Control: take a channel offline or bring it back; emits the status change. */
  async setOnline(channelId: string, online: boolean) {
    const [row] = await this.db
      .update(simulatorChannels)
      .set({ online })
      .where(eq(simulatorChannels.channelId, channelId))
      .returning();
    if (!row) return false;
    if (row.paired) {
      await this.emit({ type: "channel_status", channelId, status: online ? "connected" : "disconnected", at: new Date() });
    }
    return true;
  }

  async setFailures(groupId: string, spec: { failNext?: number; always?: boolean }) {
    await this.db
      .insert(simulatorFailures)
      .values({ groupId, failNext: spec.failNext ?? 0, always: spec.always ?? false })
      .onConflictDoUpdate({
        target: simulatorFailures.groupId,
        set: { failNext: spec.failNext ?? 0, always: spec.always ?? false },
      });
  }

  async setLatency(ms: number) {
    await this.db
      .insert(simulatorConfig)
      .values({ id: 1, latencyMs: ms })
      .onConflictDoUpdate({ target: simulatorConfig.id, set: { latencyMs: ms } });
    this.latencyMs = ms;
  }

  private async latency() {
    if (this.latencyMs === undefined) {
      const [row] = await this.db.select().from(simulatorConfig).where(eq(simulatorConfig.id, 1));
      this.latencyMs = row?.latencyMs ?? 0;
    }
    return this.latencyMs;
  }

  /** Consumes one injected failure for the group, if any. */
  private async injectedFailure(groupId: string) {
    const [row] = await this.db
      .update(simulatorFailures)
      .set({ failNext: sql`greatest(${simulatorFailures.failNext} - 1, 0)` })
      .where(and(eq(simulatorFailures.groupId, groupId), sql`(${simulatorFailures.always} or ${simulatorFailures.failNext} > 0)`))
      .returning();
    return row !== undefined;
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const ms = await this.latency();
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    const status = await this.getStatus(message.channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${message.channelId} is ${status}.`);
    const existing = await this.findSent(message.channelId, message.deliveryKey);
    if (existing) return existing;
    if (await this.injectedFailure(message.groupId)) {
      throw new ProviderSendError(`Simulated failure sending to ${message.groupId}.`, true);
    }
    const c = message.content;
    const [row] = await this.db
      .insert(simulatorMessages)
      .values({
        deliveryKey: message.deliveryKey,
        messageId: `SIM${randomUUID().replaceAll("-", "").slice(0, 20).toUpperCase()}`,
        channelId: message.channelId,
        groupId: message.groupId,
        campaignId: message.campaignId ?? null,
        messageType: c.type,
        text: c.type === "text" || c.type === "carousel" ? c.text : c.caption,
        mediaUrl: c.type === "text" || c.type === "carousel" ? null : c.mediaUrl,
        fileName: c.type === "document" ? (c.fileName ?? null) : null,
        cards: c.type === "carousel" ? c.cards : null,
        mentionAll: message.mentionAll,
        linkPreview: message.linkPreview !== false,
      })
      .onConflictDoNothing()
      .returning();
    // A concurrent send under the same key won the insert: answer with its receipt.
    if (!row) return (await this.findSent(message.channelId, message.deliveryKey))!;
    const receipt = { messageId: row.messageId, sentAt: row.sentAt };
    void this.deliverReceipts(message, row.messageId);
    return receipt;
  }

  private async deliverReceipts(message: OutboundMessage, messageId: string) {
    const base = { channelId: message.channelId, deliveryKey: message.deliveryKey, messageId };
    await this.emit({ type: "message_ack", ...base, at: new Date() });
    if (!isRead(message.deliveryKey)) return;
    const at = new Date();
    await this.db.update(simulatorMessages).set({ readAt: at }).where(eq(simulatorMessages.deliveryKey, message.deliveryKey));
    await this.emit({ type: "message_read", ...base, at });
  }

  async findSent(channelId: string, deliveryKey: string) {
    const [row] = await this.db
      .select({ messageId: simulatorMessages.messageId, sentAt: simulatorMessages.sentAt })
      .from(simulatorMessages)
      .where(and(eq(simulatorMessages.deliveryKey, deliveryKey), eq(simulatorMessages.channelId, channelId)));
    return row ?? null;
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
