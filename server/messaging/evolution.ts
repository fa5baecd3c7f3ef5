import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { evolutionInstances, evolutionMessages } from "../../db/schema";
import { carouselFallback } from "./carousel-fallback";
import { EvolutionClient, EvolutionHttpError, EvolutionUnreachableError } from "./evolution-client";
import {
  ProviderEvents,
  ProviderSendError,
  ProviderUnavailableError,
  sendEach,
  type ChannelStatus,
  type MessagingProvider,
  type OutboundMessage,
  type PairingInfo,
  type ProviderListener,
  type ProviderGroup,
  type Receipt,
  type SendReceipt,
} from "./provider";

export interface EvolutionOptions {
  apiUrl: string;
  apiKey: string;
  /** Our public base address; the gateway posts to `<base>/api/evolution/webhook/<channel>/<secret>`. */
  webhookBaseUrl: string;
  timeoutMs: number;
  retries: number;
  groupsTtlMs: number;
  /** Attempts of one send whose outcome stayed unknown (each one reconciled first). Default 2. */
  sendAttempts?: number;
  backoffMs?: number;
}

/** The events we ask the gateway for (Evolution's names; its webhook bodies name them in lower-case dotted form). */
export const evolutionWebhookEvents = ["CONNECTION_UPDATE", "QRCODE_UPDATED", "MESSAGES_UPDATE", "LOGOUT_INSTANCE", "REMOVE_INSTANCE"];

/** One message part as Evolution sends it: the endpoint and its body (without number/options). */
type Part = { endpoint: "sendText" | "sendMedia" | "sendWhatsAppAudio"; body: Record<string, unknown>; text: string };

interface EvolutionMessageRecord {
  key?: { id?: string; remoteJid?: string; fromMe?: boolean };
  messageTimestamp?: number | string;
}

const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** The message id we ask the gateway to use: derived from the delivery key, so a lost answer can be found again. */
export const requestedMessageId = (deliveryKey: string, part: number) =>
  "3EB0" + createHash("sha256").update(`${deliveryKey}#${part}`).digest("hex").slice(0, 18).toUpperCase();

/** Evolution's connection states → channel status; a pairing that never finished stays `connecting`. */
function channelStatus(state: string | undefined, pairedOnce: boolean): ChannelStatus {
  if (state === "open") return "connected";
  return pairedOnce ? "disconnected" : "connecting";
}

const connectionClosed = /connection closed|not connected|is not connected|instance.*(does not exist|not found)|closed/i;

/**
 * Evolution API v2 behind the provider interface: one Evolution instance per channel (named after the
 * channel id), pairing by QR code or pairing code, groups cached (fetchAllGroups is slow and
 * rate-limited), sends deduplicated by a message id derived from the delivery key and reconciled with
 * /chat/findMessages whenever an answer is lost, webhooks authenticated by a per-instance secret.
 */
export class EvolutionProvider implements MessagingProvider {
  readonly name = "evolution" as const;
  /** Baileys cannot send carousels or buttons to groups, nor forward with our bookkeeping: the service plans around it. */
  readonly capabilities = { carousel: false, forward: false, linkPreview: true, mentionAll: true };
  private readonly client: EvolutionClient;
  private readonly events = new ProviderEvents("evolution");
  private groupFetches = new Map<string, Promise<ProviderGroup[]>>();

  constructor(
    private readonly db: Db,
    private readonly opts: EvolutionOptions,
  ) {
    this.client = new EvolutionClient({ baseUrl: opts.apiUrl, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs, retries: opts.retries, backoffMs: opts.backoffMs });
  }

  subscribe(listener: ProviderListener) {
    return this.events.subscribe(listener);
  }

  private async instance(channelId: string) {
    const [row] = await this.db.select().from(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
    if (!row) throw new ProviderUnavailableError(`Channel ${channelId} has no Evolution instance.`);
    return row;
  }

  /** A gateway failure on anything but a send: the platform cannot answer now. */
  private unavailable(err: unknown, what: string): never {
    if (err instanceof ProviderUnavailableError) throw err;
    if (err instanceof EvolutionUnreachableError || err instanceof EvolutionHttpError) {
      throw new ProviderUnavailableError(`${what}: ${err.message}`);
    }
    throw err;
  }

  webhookUrl(channelId: string, secret: string) {
    return `${this.opts.webhookBaseUrl}/api/evolution/webhook/${encodeURIComponent(channelId)}/${secret}`;
  }

  async createChannel(channel: { id: string; name: string }) {
    const instanceName = channel.id;
    const secret = randomBytes(24).toString("base64url");
    // The row exists before the gateway can post its first webhook for this instance.
    await this.db
      .insert(evolutionInstances)
      .values({ channelId: channel.id, instanceName, webhookTokenHash: sha256(secret).toString("hex") })
      .onConflictDoUpdate({ target: evolutionInstances.channelId, set: { webhookTokenHash: sha256(secret).toString("hex"), updatedAt: new Date() } });
    const webhook = { enabled: true, url: this.webhookUrl(channel.id, secret), byEvents: false, base64: false, events: evolutionWebhookEvents };
    try {
      const created = await this.client.request<{ qrcode?: { base64?: string; pairingCode?: string | null } }>("POST", "/instance/create", {
        body: { instanceName, integration: "WHATSAPP-BAILEYS", qrcode: true, webhook },
      });
      await this.savePairing(channel.id, created?.qrcode);
    } catch (err) {
      // A retried create after a lost answer: the instance is there already, so configure it again below.
      const exists = err instanceof EvolutionHttpError && (err.status === 403 || err.status === 409) && /already in use|exists/i.test(err.message);
      if (!exists) this.unavailable(err, `Evolution API could not create instance ${instanceName}`);
    }
    try {
      await this.client.request("POST", `/webhook/set/${encodeURIComponent(instanceName)}`, { body: { webhook }, retry: true });
    } catch (err) {
      this.unavailable(err, `Evolution API could not set the webhook of ${instanceName}`);
    }
    return { ref: instanceName, status: "connecting" as const };
  }

  private async savePairing(channelId: string, qr: { base64?: string | null; pairingCode?: string | null; code?: string } | undefined) {
    if (!qr || (!qr.base64 && !qr.pairingCode)) return;
    await this.db
      .update(evolutionInstances)
      .set({ qrCode: qr.base64 ?? null, pairingCode: qr.pairingCode ?? null, pairingUpdatedAt: new Date(), updatedAt: new Date() })
      .where(eq(evolutionInstances.channelId, channelId));
  }

  /** Records a state the gateway reported; emits `channel_status` when the channel status changed. */
  private async applyState(channelId: string, state: string, at = new Date()) {
    const row = await this.instance(channelId);
    // Baileys passes through `connecting` while it reconnects a paired number: not a status change
    // (a real loss arrives as `close`), so campaigns don't pause and resume on every reconnect.
    if (row.pairedOnce && state === "connecting") return channelStatus(row.state, true);
    if (row.state === state) return channelStatus(state, row.pairedOnce);
    const pairedOnce = row.pairedOnce || state === "open";
    const before = channelStatus(row.state, row.pairedOnce);
    const after = channelStatus(state, pairedOnce);
    await this.db
      .update(evolutionInstances)
      .set({
        state,
        pairedOnce,
        updatedAt: at,
        // A paired channel needs no QR code any more; a lost connection drops the cached groups' freshness.
        ...(state === "open" ? { qrCode: null, pairingCode: null } : {}),
      })
      .where(eq(evolutionInstances.channelId, channelId));
    if (before !== after) await this.events.emit({ type: "channel_status", channelId, status: after, at });
    return after;
  }

  async getStatus(channelId: string): Promise<ChannelStatus> {
    const row = await this.instance(channelId);
    let state: string | undefined;
    try {
      const res = await this.client.request<{ instance?: { state?: string } }>("GET", `/instance/connectionState/${encodeURIComponent(row.instanceName)}`, { retry: true });
      state = res?.instance?.state;
    } catch (err) {
      this.unavailable(err, `Evolution API cannot tell the state of ${row.instanceName}`);
    }
    if (!state) throw new ProviderUnavailableError(`Evolution API gave no state for ${row.instanceName}.`);
    return this.applyState(channelId, state);
  }

  async pairing(channelId: string, options: { phoneNumber?: string } = {}): Promise<PairingInfo> {
    const row = await this.instance(channelId);
    const status = await this.getStatus(channelId);
    if (status === "connected") return { status, qrCode: null, pairingCode: null, automatic: false };
    try {
      const res = await this.client.request<{ base64?: string; pairingCode?: string | null; code?: string; instance?: { state?: string } }>(
        "GET",
        `/instance/connect/${encodeURIComponent(row.instanceName)}`,
        { query: options.phoneNumber ? { number: options.phoneNumber } : {}, retry: true },
      );
      if (res?.instance?.state === "open") return { status: await this.applyState(channelId, "open"), qrCode: null, pairingCode: null, automatic: false };
      await this.savePairing(channelId, res);
    } catch (err) {
      this.unavailable(err, `Evolution API cannot start pairing ${row.instanceName}`);
    }
    const fresh = await this.instance(channelId);
    return { status, qrCode: fresh.qrCode, pairingCode: fresh.pairingCode, automatic: false };
  }

  async disconnectChannel(channelId: string) {
    const row = await this.instance(channelId);
    try {
      await this.client.request("DELETE", `/instance/logout/${encodeURIComponent(row.instanceName)}`, { retry: true });
    } catch (err) {
      // Evolution answers 400 "is not connected" when there is nothing to log out.
      if (!(err instanceof EvolutionHttpError && err.status === 400)) this.unavailable(err, `Evolution API could not log ${row.instanceName} out`);
    }
    await this.applyState(channelId, "close");
  }

  async deleteChannel(channelId: string) {
    const row = await this.instance(channelId);
    try {
      if (row.state === "open") await this.disconnectChannel(channelId);
      await this.client.request("DELETE", `/instance/delete/${encodeURIComponent(row.instanceName)}`, { retry: true });
    } catch (err) {
      if (!(err instanceof EvolutionHttpError && err.status === 404)) this.unavailable(err, `Evolution API could not delete ${row.instanceName}`);
    }
    await this.db.delete(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * Groups of a connected channel, from the cache while it is fresh (EVOLUTION_GROUPS_TTL_SECONDS).
   * One fetch at a time per channel; when the gateway fails, a cached list (however old) is served.
   */
  async listGroups(channelId: string): Promise<ProviderGroup[]> {
    const status = await this.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: its groups cannot be queried.`);
    const row = await this.instance(channelId);
    if (row.groups && row.groupsFetchedAt && Date.now() - row.groupsFetchedAt.getTime() < this.opts.groupsTtlMs) return row.groups;
    let pending = this.groupFetches.get(channelId);
    if (!pending) {
      pending = this.fetchGroups(channelId, row.instanceName).finally(() => this.groupFetches.delete(channelId));
      this.groupFetches.set(channelId, pending);
    }
    try {
      return await pending;
    } catch (err) {
      if (row.groups) return row.groups;
      this.unavailable(err, `Evolution API cannot list the groups of ${row.instanceName}`);
    }
  }

  private async fetchGroups(channelId: string, instanceName: string) {
    const res = await this.client.request<{ id?: string; subject?: string }[]>("GET", `/group/fetchAllGroups/${encodeURIComponent(instanceName)}`, {
      query: { getParticipants: "false" },
      retry: true,
      // Large accounts take a while; sends keep the normal time-out.
      timeoutMs: Math.max(this.opts.timeoutMs, 60_000),
    });
    if (!Array.isArray(res)) throw new ProviderUnavailableError(`Evolution API gave no group list for ${instanceName}.`);
    const groups = res
      .filter((g): g is { id: string; subject?: string } => typeof g?.id === "string" && /^\d{5,40}@g\.us$/.test(g.id))
      .map((g) => ({ id_group: g.id, name: g.subject ?? "" }));
    await this.db.update(evolutionInstances).set({ groups, groupsFetchedAt: new Date() }).where(eq(evolutionInstances.channelId, channelId));
    return groups;
  }

  /** The message parts of one delivery, as Evolution's endpoints take them. */
  private parts(message: OutboundMessage): Part[] {
    const c = message.content;
    const linkPreview = message.linkPreview !== false;
    switch (c.type) {
      case "text":
        return [{ endpoint: "sendText", body: { text: c.text, linkPreview }, text: c.text }];
      case "audio":
        // A voice note: Evolution has no caption for it.
        return [{ endpoint: "sendWhatsAppAudio", body: { audio: c.mediaUrl }, text: "" }];
      case "image":
      case "video":
      case "document":
        return [
          {
            endpoint: "sendMedia",
            body: { mediatype: c.type, media: c.mediaUrl, caption: c.caption, ...(c.type === "document" && c.fileName ? { fileName: c.fileName } : {}) },
            text: c.caption,
          },
        ];
      case "carousel":
        return carouselFallback(c.text, c.cards).map((card) => ({
          endpoint: "sendMedia",
          body: { mediatype: "image", media: card.mediaUrl, caption: card.caption },
          text: card.caption,
        }));
    }
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const row = await this.instance(message.channelId);
    // Offline by the gateway's last word: check once more (a webhook may have been missed) before refusing.
    if (row.state !== "open" && (await this.getStatus(message.channelId)) !== "connected") {
      throw new ProviderUnavailableError(`Channel ${message.channelId} is not connected.`);
    }
    let last: SendReceipt | undefined;
    for (const [i, part] of this.parts(message).entries()) last = await this.sendPart(row.instanceName, message, i, part);
    if (!last) throw new ProviderSendError("Nothing to send.", false);
    return last;
  }

  sendMany(messages: OutboundMessage[]) {
    return sendEach(this, messages);
  }

  private async sendPart(instanceName: string, message: OutboundMessage, part: number, p: Part): Promise<SendReceipt> {
    const requestedId = requestedMessageId(message.deliveryKey, part);
    const [known] = await this.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, message.deliveryKey), eq(evolutionMessages.part, part)));
    if (known?.messageId && known.sentAt) return { messageId: known.messageId, sentAt: known.sentAt };
    const startedAt = new Date();
    if (known) {
      // An earlier attempt never got its answer: ask the gateway before sending again.
      const found = await this.findOnGateway(instanceName, message.groupId, requestedId, p.text, known.createdAt).catch(() => undefined);
      if (found === undefined) throw new ProviderSendError(`Evolution API cannot confirm an earlier send to ${message.groupId}; retrying later.`, true);
      if (found) return this.recordPart(message.deliveryKey, part, found);
    } else {
      await this.db
        .insert(evolutionMessages)
        .values({ deliveryKey: message.deliveryKey, part, channelId: message.channelId, groupId: message.groupId, requestedId })
        .onConflictDoNothing();
    }

    const body = { number: message.groupId, ...p.body, mentionsEveryOne: message.mentionAll, messageId: requestedId };
    const attempts = Math.max(1, this.opts.sendAttempts ?? 2);
    let lastError: Error = new ProviderSendError("not attempted", true);
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        const res = await this.client.request<{ key?: { id?: string }; messageTimestamp?: string | number }>(
          "POST",
          `/message/${p.endpoint}/${encodeURIComponent(instanceName)}`,
          { body, retry: false },
        );
        const id = res?.key?.id ?? requestedId;
        return this.recordPart(message.deliveryKey, part, { id, at: timestampOf(res?.messageTimestamp) ?? new Date() });
      } catch (err) {
        lastError = err as Error;
        if (err instanceof EvolutionHttpError && err.status < 500 && err.status !== 429) throw this.sendFailure(err, message);
        if (err instanceof EvolutionHttpError && err.status === 429) throw new ProviderSendError(err.message, true);
        // Time-out, lost connection or 5xx: the gateway may have sent it. Look before sending again.
        const found = await this.findOnGateway(instanceName, message.groupId, requestedId, p.text, startedAt).catch(() => undefined);
        if (found) return this.recordPart(message.deliveryKey, part, found);
        if (found === undefined) break; // cannot even look: leave it to the service's retry
      }
    }
    throw new ProviderSendError(lastError.message, true);
  }

  /** A 4xx answer to a send: offline instance → unavailable (released, retried later); otherwise refused. */
  private sendFailure(err: EvolutionHttpError, message: OutboundMessage) {
    if (err.status === 401 || err.status === 403) return new ProviderUnavailableError(`Evolution API refused our API key: ${err.message}`);
    if (err.status === 404 || connectionClosed.test(err.message)) return new ProviderUnavailableError(`Channel ${message.channelId} is not connected: ${err.message}`);
    return new ProviderSendError(err.message, false);
  }

  private async recordPart(deliveryKey: string, part: number, found: { id: string; at: Date }): Promise<SendReceipt> {
    await this.db
      .update(evolutionMessages)
      .set({ messageId: found.id, sentAt: found.at })
      .where(and(eq(evolutionMessages.deliveryKey, deliveryKey), eq(evolutionMessages.part, part)));
    return { messageId: found.id, sentAt: found.at };
  }

  /**
   * /chat/findMessages: by the message id we asked for; failing that (a gateway that ignores
   * `messageId`), by our own recent messages in the group carrying the same text.
   * Returns null when it was not sent, throws when the gateway cannot answer.
   */
  private async findOnGateway(instanceName: string, groupId: string, requestedId: string, text: string, since: Date) {
    const path = `/chat/findMessages/${encodeURIComponent(instanceName)}`;
    const byId = await this.client.request<unknown>("POST", path, { body: { where: { key: { id: requestedId } }, page: 1, offset: 10 }, retry: true });
    const hit = records(byId).find((r) => r.key?.id === requestedId);
    if (hit) return { id: requestedId, at: timestampOf(hit.messageTimestamp) ?? new Date() };
    if (!text) return null;
    const recent = await this.client.request<unknown>("POST", path, { body: { where: { key: { remoteJid: groupId, fromMe: true } }, page: 1, offset: 50 }, retry: true });
    const sinceSeconds = Math.floor(since.getTime() / 1000) - 5;
    const same = records(recent).find(
      (r) => r.key?.id && (Number(r.messageTimestamp) || 0) >= sinceSeconds && messageText(r) === text,
    );
    return same?.key?.id ? { id: same.key.id, at: timestampOf(same.messageTimestamp) ?? new Date() } : null;
  }

  async findSent(channelId: string, deliveryKey: string): Promise<SendReceipt | null> {
    const rows = await this.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, deliveryKey), eq(evolutionMessages.channelId, channelId)))
      .orderBy(evolutionMessages.part);
    if (rows.length === 0) return null; // a row is written before every first attempt
    const { instanceName } = await this.instance(channelId);
    let last: SendReceipt | null = null;
    for (const row of rows) {
      if (row.messageId && row.sentAt) {
        last = { messageId: row.messageId, sentAt: row.sentAt };
        continue;
      }
      const found = await this.findOnGateway(instanceName, row.groupId, row.requestedId, "", row.createdAt);
      if (!found) return null; // this part never went out: the delivery is resent (sent parts are skipped)
      last = await this.recordPart(deliveryKey, row.part, found);
    }
    return last;
  }

  /**
   * A webhook from the gateway for one channel. Returns false when the secret does not match (the
   * route answers 401). Connection changes become channel status changes; MESSAGES_UPDATE acks and
   * reads become receipts of the deliveries they belong to.
   */
  async handleWebhook(channelId: string, secret: string, payload: unknown): Promise<boolean> {
    const [row] = await this.db.select().from(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
    const expected = Buffer.from(row?.webhookTokenHash ?? "0".repeat(64), "hex");
    const valid = timingSafeEqual(sha256(secret), expected) && Boolean(row);
    if (!valid || !row) return false;
    const body = (payload ?? {}) as { event?: string; data?: unknown; date_time?: string };
    const event = String(body.event ?? "").toLowerCase().replaceAll("_", ".");
    const at = body.date_time && !Number.isNaN(Date.parse(body.date_time)) ? new Date(body.date_time) : new Date();
    const data = body.data as Record<string, unknown> | Record<string, unknown>[] | undefined;
    if (event === "connection.update" && data && !Array.isArray(data) && typeof data.state === "string") {
      await this.applyState(channelId, data.state, at);
    } else if (event === "qrcode.updated" && data && !Array.isArray(data)) {
      await this.savePairing(channelId, (data.qrcode ?? data) as { base64?: string; pairingCode?: string });
    } else if (event === "logout.instance" || event === "remove.instance") {
      await this.applyState(channelId, "close", at);
    } else if (event === "messages.update" && data) {
      await this.receipts(channelId, Array.isArray(data) ? data : [data], at);
    }
    return true;
  }

  private async receipts(channelId: string, updates: Record<string, unknown>[], at: Date) {
    const acked: Receipt[] = [];
    const read: Receipt[] = [];
    for (const u of updates) {
      const id = (u.keyId ?? (u.key as { id?: string } | undefined)?.id) as string | undefined;
      const status = String(u.status ?? "").toUpperCase();
      if (!id || !["DELIVERY_ACK", "READ", "PLAYED"].includes(status)) continue;
      const [m] = await this.db
        .select({ deliveryKey: evolutionMessages.deliveryKey })
        .from(evolutionMessages)
        .where(and(eq(evolutionMessages.messageId, id), eq(evolutionMessages.channelId, channelId), isNotNull(evolutionMessages.sentAt)));
      if (!m) continue;
      (status === "DELIVERY_ACK" ? acked : read).push({ channelId, deliveryKey: m.deliveryKey, messageId: id });
    }
    if (acked.length) await this.events.emit({ type: "message_ack", receipts: acked, at });
    if (read.length) await this.events.emit({ type: "message_read", receipts: read, at });
  }
}

/** findMessages answers `{messages: {records: [...]}}` (v2); older builds answer a bare array. */
function records(res: unknown): EvolutionMessageRecord[] {
  if (Array.isArray(res)) return res as EvolutionMessageRecord[];
  const r = (res as { messages?: { records?: unknown } } | undefined)?.messages?.records;
  return Array.isArray(r) ? (r as EvolutionMessageRecord[]) : [];
}

function messageText(r: EvolutionMessageRecord): string {
  const m = (r as { message?: Record<string, { text?: string; caption?: string } | string> }).message ?? {};
  if (typeof m.conversation === "string") return m.conversation;
  for (const v of Object.values(m)) {
    if (v && typeof v === "object" && (v.text ?? v.caption)) return (v.text ?? v.caption) as string;
  }
  return "";
}

function timestampOf(value: string | number | undefined): Date | undefined {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000) : undefined;
}
