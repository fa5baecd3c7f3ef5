import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, desc, eq, inArray, isNotNull, isNull, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { evolutionInstances, evolutionMessages } from "../../db/schema";
import { carouselFallback } from "./carousel-fallback";
import { EvolutionClient, EvolutionHttpError, EvolutionUnreachableError } from "./evolution-client";
import {
  ProviderEvents,
  ProviderOutcomeUnknownError,
  ProviderSendError,
  ProviderUnavailableError,
  sendEach,
  type ChannelStatus,
  type MessagingProvider,
  type OutboundMessage,
  type PairingInfo,
  type ProviderListener,
  type ProviderGroup,
  type LookupResult,
  type Receipt,
  type SentLookup,
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
  backoffMs?: number;
  /** A lost answer is looked up this long after the attempt (EVOLUTION_RECONCILE_AFTER_SECONDS). Default 300 s. */
  reconcileAfterMs?: number;
}

/** The events we ask the gateway for (Evolution's names; its webhook bodies name them in lower-case dotted form). */
export const evolutionWebhookEvents = ["CONNECTION_UPDATE", "QRCODE_UPDATED", "MESSAGES_UPDATE", "SEND_MESSAGE", "LOGOUT_INSTANCE", "REMOVE_INSTANCE"];

/** One message part as Evolution sends it: the endpoint and its body (without number/options), its kind and text. */
type Part = { endpoint: "sendText" | "sendMedia" | "sendWhatsAppAudio"; kind: "text" | "image" | "video" | "document" | "audio"; body: Record<string, unknown>; text: string };

export interface EvolutionMessageRecord {
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
  readonly reconcileAfterMs: number;
  private versionProbe: Promise<boolean> | undefined;
  private readonly client: EvolutionClient;
  private readonly events = new ProviderEvents("evolution");
  private groupFetches = new Map<string, Promise<ProviderGroup[]>>();

  constructor(
    private readonly db: Db,
    private readonly opts: EvolutionOptions,
  ) {
    this.reconcileAfterMs = opts.reconcileAfterMs ?? 300_000;
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
        return [{ endpoint: "sendText", kind: "text", body: { text: c.text, linkPreview }, text: c.text }];
      case "audio":
        // A voice note: Evolution has no caption for it (and drops mentionsEveryOne).
        return [{ endpoint: "sendWhatsAppAudio", kind: "audio", body: { audio: c.mediaUrl }, text: "" }];
      case "image":
      case "video":
      case "document":
        return [
          {
            endpoint: "sendMedia",
            kind: c.type,
            // Evolution derives the mimetype from fileName only: always send one with the real extension.
            body: { mediatype: c.type, media: c.mediaUrl, caption: c.caption, fileName: mediaFileName(c.type, c.mediaUrl, c.fileName) },
            text: c.caption,
          },
        ];
      case "carousel":
        return carouselFallback(c.text, c.cards).map((card) => ({
          endpoint: "sendMedia",
          kind: "image",
          body: { mediatype: "image", media: card.mediaUrl, caption: card.caption, fileName: mediaFileName("image", card.mediaUrl) },
          text: card.caption,
        }));
    }
  }

  /**
   * The gateway's version (`GET /`), asked once: 2.4.0 and later keep our `messageId` for text and
   * media (never for audio); older ones make their own ids. Unknown (no answer) counts as older.
   */
  private async keepsMessageIds(): Promise<boolean> {
    this.versionProbe ??= this.client
      .request<{ version?: string }>("GET", "/", { retry: true })
      .then((r) => versionAtLeast(String(r?.version ?? ""), "2.4.0"))
      .catch(() => {
        this.versionProbe = undefined; // ask again next time
        return false;
      });
    return this.versionProbe;
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

  /**
   * One POST per part, never repeated here: a lost answer is ProviderOutcomeUnknownError and the
   * dispatch core decides (look-ups, `send.message` events) whether it ever goes again. Parts already
   * sent (a carousel resent after a part was lost) are skipped.
   */
  private async sendPart(instanceName: string, message: OutboundMessage, part: number, p: Part): Promise<SendReceipt> {
    const requestedId = requestedMessageId(message.deliveryKey, part);
    const [known] = await this.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, message.deliveryKey), eq(evolutionMessages.part, part)));
    if (known?.messageId && known.sentAt) return { messageId: known.messageId, sentAt: known.sentAt };
    const idRequested = p.endpoint !== "sendWhatsAppAudio" && (await this.keepsMessageIds());
    const attemptedAt = new Date();
    const fingerprint = partFingerprint(p.kind, p.text);
    await this.db
      .insert(evolutionMessages)
      .values({ deliveryKey: message.deliveryKey, part, channelId: message.channelId, groupId: message.groupId, requestedId, fingerprint, idRequested, attemptedAt })
      .onConflictDoUpdate({ target: [evolutionMessages.deliveryKey, evolutionMessages.part], set: { attemptedAt, idRequested, fingerprint } });

    const body = { number: message.groupId, ...p.body, mentionsEveryOne: message.mentionAll, ...(idRequested ? { messageId: requestedId } : {}) };
    try {
      const res = await this.client.request<{ key?: { id?: string }; messageTimestamp?: string | number }>(
        "POST",
        `/message/${p.endpoint}/${encodeURIComponent(instanceName)}`,
        { body, retry: false },
      );
      const id = res?.key?.id ?? (idRequested ? requestedId : undefined);
      if (!id) throw new ProviderOutcomeUnknownError(`Evolution API accepted the send to ${message.groupId} without a message id.`);
      return this.recordPart(message.deliveryKey, part, { id, at: timestampOf(res?.messageTimestamp) ?? new Date() });
    } catch (err) {
      throw await this.sendFailure(err, message, p);
    }
  }

  /**
   * What a failed POST means (CONTRACT.md §5, docs/evolution.md): Evolution answers 400 with the error
   * text for failures that did not send, so the text decides transient / permanent; 401/403/404 and a
   * closed connection make the channel unavailable; a 500 of media preparation did not send; a lost
   * answer or any other 5xx is unknown.
   */
  private async sendFailure(err: unknown, message: OutboundMessage, p: Part): Promise<Error> {
    if (err instanceof ProviderOutcomeUnknownError || err instanceof ProviderSendError || err instanceof ProviderUnavailableError) return err;
    if (err instanceof EvolutionUnreachableError) {
      return err.notSent ? new ProviderUnavailableError(err.message) : new ProviderOutcomeUnknownError(err.message);
    }
    if (!(err instanceof EvolutionHttpError)) return new ProviderOutcomeUnknownError(err instanceof Error ? err.message : String(err));
    if (err.status === 401 || err.status === 403) return new ProviderUnavailableError(`Evolution API refused our API key: ${err.message}`);
    if (err.status === 404) return new ProviderUnavailableError(`Channel ${message.channelId} has no instance on the gateway: ${err.message}`);
    if (err.status >= 500) {
      // sendMedia / sendWhatsAppAudio fail with 500 while preparing the media (download, ffmpeg): nothing went out.
      if (err.status === 500 && p.endpoint !== "sendText") return new ProviderSendError(`Media preparation failed (not sent): ${err.message}`, true);
      return new ProviderOutcomeUnknownError(err.message);
    }
    const kind = classifySendError(err.message);
    if (kind === "closed") {
      const status = await this.getStatus(message.channelId).catch(() => "disconnected" as const);
      return status === "connected" ? new ProviderSendError(err.message, true) : new ProviderUnavailableError(`Channel ${message.channelId} is not connected: ${err.message}`);
    }
    if (kind === "rate_limited") return new ProviderSendError(err.message, true, { rateLimited: true });
    return new ProviderSendError(err.message, kind === "transient");
  }

  private async recordPart(deliveryKey: string, part: number, found: { id: string; at: Date }): Promise<SendReceipt> {
    await this.db
      .update(evolutionMessages)
      .set({ messageId: found.id, sentAt: found.at })
      .where(and(eq(evolutionMessages.deliveryKey, deliveryKey), eq(evolutionMessages.part, part)));
    return { messageId: found.id, sentAt: found.at };
  }

  /**
   * /chat/findMessages for one unsettled part: by the id we asked for (kept by gateways ≥ 2.4.0), else
   * by our own messages in the group since the first attempt whose content fingerprint matches,
   * leaving out gateway ids another part already claimed. Null: not (yet) there. Throws when the
   * gateway cannot answer.
   */
  private async findOnGateway(instanceName: string, row: typeof evolutionMessages.$inferSelect) {
    const path = `/chat/findMessages/${encodeURIComponent(instanceName)}`;
    if (row.idRequested) {
      const byId = await this.client.request<unknown>("POST", path, { body: { where: { key: { id: row.requestedId } }, page: 1, offset: 10 }, retry: true });
      const hit = records(byId).find((r) => r.key?.id === row.requestedId);
      if (hit) return { id: row.requestedId, at: timestampOf(hit.messageTimestamp) ?? new Date() };
    }
    if (!row.fingerprint) return null;
    const recent = await this.client.request<unknown>("POST", path, { body: { where: { key: { remoteJid: row.groupId, fromMe: true } }, page: 1, offset: 100 }, retry: true });
    const sinceSeconds = Math.floor(row.createdAt.getTime() / 1000) - 5;
    const candidates = records(recent).filter(
      (r) => r.key?.id && r.key.fromMe !== false && (Number(r.messageTimestamp) || 0) >= sinceSeconds && recordFingerprint(r) === row.fingerprint,
    );
    if (candidates.length === 0) return null;
    const claimed = await this.claimedIds(candidates.map((r) => r.key!.id!), row);
    const free = candidates.filter((r) => !claimed.has(r.key!.id!)).sort((a, b) => Number(a.messageTimestamp) - Number(b.messageTimestamp));
    return free[0] ? { id: free[0].key!.id!, at: timestampOf(free[0].messageTimestamp) ?? new Date() } : null;
  }

  /** Gateway ids already recorded for another delivery (or part): never claimed twice. */
  private async claimedIds(ids: string[], own: { deliveryKey: string; part: number }) {
    const rows = await this.db
      .select({ messageId: evolutionMessages.messageId, deliveryKey: evolutionMessages.deliveryKey, part: evolutionMessages.part })
      .from(evolutionMessages)
      .where(inArray(evolutionMessages.messageId, ids));
    return new Set(rows.filter((r) => r.deliveryKey !== own.deliveryKey || r.part !== own.part).map((r) => r.messageId!));
  }

  async findSent(lookup: SentLookup): Promise<LookupResult> {
    const rows = await this.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, lookup.deliveryKey), eq(evolutionMessages.channelId, lookup.channelId)))
      .orderBy(evolutionMessages.part);
    if (rows.length === 0) return { kind: "absent" }; // a row is written before every POST
    const unsettled = rows.filter((r) => !(r.messageId && r.sentAt));
    if (unsettled.some((r) => !r.fingerprint && !r.idRequested)) return { kind: "unsearchable" };
    const { instanceName } = await this.instance(lookup.channelId);
    for (const row of unsettled) {
      const found = await this.findOnGateway(instanceName, row);
      if (!found) return { kind: "not_found" }; // a resend skips the parts that are out
      await this.recordPart(row.deliveryKey, row.part, found);
      row.messageId = found.id;
      row.sentAt = found.at;
    }
    const last = rows[rows.length - 1];
    return { kind: "sent", receipt: { messageId: last.messageId!, sentAt: last.sentAt! } };
  }

  /**
   * `send.message`: the gateway sent a message. If it is one of ours whose answer we have not got (by
   * the id we asked for, else by group + content fingerprint, the latest attempt first), that part is
   * settled; once every part of the delivery is, `message_sent` tells the dispatch core.
   */
  private async sentEvent(channelId: string, data: Record<string, unknown>, at: Date) {
    const r = data as EvolutionMessageRecord;
    const id = r.key?.id;
    const groupId = r.key?.remoteJid;
    if (!id || !groupId || r.key?.fromMe === false) return;
    const [already] = await this.db.select({ k: evolutionMessages.deliveryKey }).from(evolutionMessages).where(eq(evolutionMessages.messageId, id)).limit(1);
    if (already) return;
    const fingerprint = recordFingerprint(r);
    const [part] = await this.db
      .select()
      .from(evolutionMessages)
      .where(
        and(
          eq(evolutionMessages.channelId, channelId),
          eq(evolutionMessages.groupId, groupId),
          isNull(evolutionMessages.messageId),
          or(
            and(eq(evolutionMessages.idRequested, true), eq(evolutionMessages.requestedId, id)),
            fingerprint ? eq(evolutionMessages.fingerprint, fingerprint) : undefined,
          ),
        ),
      )
      .orderBy(desc(evolutionMessages.attemptedAt))
      .limit(1);
    if (!part) return;
    const sentAt = timestampOf(r.messageTimestamp) ?? at;
    await this.recordPart(part.deliveryKey, part.part, { id, at: sentAt });
    const rest = await this.db
      .select({ part: evolutionMessages.part, messageId: evolutionMessages.messageId })
      .from(evolutionMessages)
      .where(eq(evolutionMessages.deliveryKey, part.deliveryKey))
      .orderBy(evolutionMessages.part);
    if (rest.some((x) => !x.messageId)) return;
    // The delivery's receipt is its last part (what send() answers).
    await this.events.emit({ type: "message_sent", receipts: [{ channelId, deliveryKey: part.deliveryKey, messageId: rest[rest.length - 1].messageId! }], at: sentAt });
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
    } else if (event === "send.message" && data) {
      for (const d of Array.isArray(data) ? data : [data]) await this.sentEvent(channelId, d, new Date());
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

/** Evolution's stored message types → our content kinds. */
const recordKinds: Record<string, string> = {
  conversation: "text",
  extendedTextMessage: "text",
  imageMessage: "image",
  videoMessage: "video",
  documentMessage: "document",
  documentWithCaptionMessage: "document",
  audioMessage: "audio",
};

/** The fingerprint of what we send: kind + text/caption. Null when there is no text to recognise it by. */
export function partFingerprint(kind: string, text: string): string | null {
  if (!text.trim()) return null;
  return createHash("sha256").update(`${kind}\n${text.trim()}`).digest("hex");
}

/** The same fingerprint of a message the gateway stored (findMessages record or `send.message` data). */
export function recordFingerprint(r: EvolutionMessageRecord): string | null {
  const m = (r as { message?: Record<string, unknown> }).message ?? {};
  for (const [key, value] of Object.entries(m)) {
    const kind = recordKinds[key];
    if (!kind) continue;
    if (typeof value === "string") return partFingerprint(kind, value);
    let v = value as { text?: string; caption?: string; message?: { documentMessage?: { caption?: string } } } | null;
    if (key === "documentWithCaptionMessage") v = v?.message?.documentMessage ?? null;
    return partFingerprint(kind, String(v?.text ?? v?.caption ?? ""));
  }
  return null;
}

/** Default extensions when neither `file_name` nor the URL's path carries one (docs/evolution.md). */
const defaultExtensions = { image: "jpg", video: "mp4", document: "pdf" } as const;
const extensionOf = (name: string) => /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1];

/**
 * The `fileName` Evolution gets (it derives the mimetype from it alone): the campaign's `file_name`
 * (given the URL's extension, or the type's default, if it has none); else the URL path's basename
 * when it has an extension; else `<type>.<default extension>`.
 */
export function mediaFileName(type: "image" | "video" | "document", url: string, given?: string): string {
  let base = "";
  try {
    base = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
  } catch {
    base = "";
  }
  const urlExtension = extensionOf(base);
  const name = given?.trim();
  if (name) return extensionOf(name) ? name : `${name}.${urlExtension ?? defaultExtensions[type]}`;
  if (urlExtension && base.length > urlExtension.length + 1) return base;
  return `${type}.${defaultExtensions[type]}`;
}

/** Evolution's 400 texts for a send (EVOLUTION-FACTS.md): what each means for us. */
export function classifySendError(text: string): "rate_limited" | "transient" | "closed" | "permanent" {
  if (/rate-?overlimit/i.test(text)) return "rate_limited";
  if (/connection closed|not connected/i.test(text)) return "closed";
  if (/timed out|no sessions|media upload failed|\[object Object\]|stream errored|socket/i.test(text)) return "transient";
  return "permanent";
}

function versionAtLeast(version: string, wanted: string) {
  const n = (v: string) => v.split(/[.-]/).slice(0, 3).map((x) => Number.parseInt(x, 10) || 0);
  const [a, b] = [n(version), n(wanted)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

function timestampOf(value: string | number | undefined): Date | undefined {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000) : undefined;
}
