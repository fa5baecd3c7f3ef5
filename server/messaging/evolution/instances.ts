import { randomBytes } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { tsParam } from "../../../db/errors";
import { evolutionInstances } from "../../../db/schema";
import { mapLimit } from "../../map-limit";
import { type ChannelStatus, type NumberLossReason, ProviderUnavailableError } from "../provider";
import { EvolutionHttpError, EvolutionUnreachableError } from "./client";
import { type EvolutionContext, isLostInstance, sha256, unavailable } from "./context";
import { compareVersions, type Gateway } from "./gateway-check";
import { jidNumber } from "./jids";

/** The events we ask the gateway for (Evolution's names; its webhook bodies name them in lower-case dotted form). */
export const evolutionWebhookEvents = [
  "CONNECTION_UPDATE",
  "QRCODE_UPDATED",
  "MESSAGES_UPDATE",
  // Votes on our polls come only as messages.upsert of type pollUpdateMessage (docs/evolution.md#polls); every other upsert is dropped at once.
  "MESSAGES_UPSERT",
  "SEND_MESSAGE",
  "LOGOUT_INSTANCE",
  "REMOVE_INSTANCE",
  "GROUP_PARTICIPANTS_UPDATE",
];

/** The header that carries an instance's webhook secret (set with `webhook.headers`; never in the URL, which Evolution logs). */
export const webhookTokenHeader = "x-webhook-token";

/** Our own instance state (never the gateway's): a send found the gateway unreachable; the state poll reads it again. */
const gatewayUnreachable = "unreachable";

/**
 * Our own instance state (never the gateway's): the paired number has been reconnecting for longer than the grace
 * (docs/evolution.md#a-number-that-is-reconnecting): the channel is `disconnected` until the gateway says `open`.
 */
const reconnectingTooLong = "reconnecting";

/** How long a retry waits at most while a number reconnects within its grace (a reconnect usually takes seconds). */
const reconnectRetryMs = 5_000;

/**
 * A paired number that is reconnecting while its channel still counts as connected (within the grace): since when,
 * and whether the gateway itself said so (`connecting`, or a close it reconnects) or only its sends answered
 * `Connection Closed` while it said `open`.
 */
interface Reconnect {
  since: number;
  gatewaySaid: boolean;
  /** When the gateway's state was last asked about it (a missed `open`, or one another process received, ends it). */
  checkedAt: number;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Evolution's connection states → channel status; a pairing that never finished stays `connecting`;
 * `refused` (the gateway gave up after QRCODE_LIMIT codes) is `disconnected` until pairing is asked again.
 */
function channelStatus(state: string | undefined, pairedOnce: boolean): ChannelStatus {
  if (state === "open") return "connected";
  if (state === "refused") return "disconnected";
  return pairedOnce ? "disconnected" : "connecting";
}

/**
 * Why WhatsApp closed a session, from `connection.update`'s `statusReason` (docs/evolution.md#disconnect-reasons-and-number-health).
 * Evolution reports a close only for the codes it does not reconnect: 401, 402, 403, 406, and from 2.4.0-rc 408;
 * Baileys' DisconnectReason names 401 loggedOut and 403 forbidden, Evolution's commit 258f5675 402 a temporary and
 * 406 a permanent ban. 408 on 2.4 (`gatewayVersion`) is a logout: that close emits `logout.instance`, whose handler
 * deletes the session (monitor.service.ts cleaningUp), so the number must pair again; on 2.3.x a 408 is reconnected
 * silently and never reported as a close. Anything else (428, 440, 500, 515…) is a plain disconnect.
 */
export function lossReason(statusReason: unknown, gatewayVersion?: string | null): { reason: NumberLossReason; detail: string } | undefined {
  const code = Number(statusReason);
  if (code === 401) return { reason: "logged_out", detail: "statusReason 401 (loggedOut)" };
  if (code === 402) return { reason: "restricted", detail: "statusReason 402 (temporary ban)" };
  if (code === 403) return { reason: "banned", detail: "statusReason 403 (forbidden)" };
  if (code === 406) return { reason: "banned", detail: "statusReason 406 (permanent ban)" };
  if (code === 408 && gatewayVersion && compareVersions(gatewayVersion, "2.4.0") >= 0)
    return { reason: "logged_out", detail: "statusReason 408 (timed out; Evolution 2.4 ends the session)" };
  return undefined;
}

/** One instance as `GET /instance/fetchInstances?instanceName=` lists it (the gateway's database row; the fields we read). */
interface ListedInstance {
  name: string;
  /**
   * `open`, `connecting` or `close`: the database column, written on a QR code, an `open` and a close the gateway does
   * not reconnect, never by a silent reconnect (so it still says `open` then); not the in-memory state
   * `connectionState` answers.
   */
  connectionStatus: string;
  ownerJid?: string | null;
  /** Baileys' code of the latest close Evolution did not reconnect (kept after a later pairing); absent before Aug 2024. */
  disconnectionReasonCode?: number | null;
  disconnectionAt?: string | null;
}

/** One Evolution instance per channel: provisioning, its connection state, the channel's status and number. */
export class Instances {
  /** Each connected channel's own number, once read (dropped when the channel's state changes). */
  readonly ownNumbers = new Map<string, string>();
  private recreations = new Map<string, Promise<void>>();
  /**
   * Paired numbers reconnecting within their grace, per channel. Kept in this process (the one that saw the
   * `connecting` or the refused send); past the grace the channel's state in the database says it.
   */
  private reconnects = new Map<string, Reconnect>();
  /**
   * Channels taken offline because their sends were refused (`Connection Closed`) while the gateway said `open`, and
   * not sending since: a read of `open` brings such a channel back, but it proved nothing (the gateway said `open` all
   * along), so its next refused send takes it offline at once instead of starting another grace.
   */
  private refusedOffline = new Set<string>();

  constructor(
    private readonly ctx: EvolutionContext,
    private readonly gateway: Gateway,
  ) {}

  /** How long a reconnecting number still counts as able to send (EVOLUTION_RECONNECT_GRACE_SECONDS). */
  private get graceMs() {
    return this.ctx.opts.reconnectGraceMs ?? 30_000;
  }

  /** The number's health a close implies (lossReason), 408 judged by the gateway's version. */
  async lossFor(statusReason: unknown) {
    return lossReason(statusReason, Number(statusReason) === 408 ? await this.gateway.version() : null);
  }

  /** The channel's instance row (ProviderUnavailableError when it has none). */
  async row(channelId: string) {
    const [row] = await this.ctx.db.select().from(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
    if (!row) throw new ProviderUnavailableError(`Channel ${channelId} has no Evolution instance.`);
    return row;
  }

  /** Where the gateway posts one channel's events; the secret travels in the `x-webhook-token` header. */
  webhookUrl(channelId: string) {
    return `${this.ctx.opts.webhookBaseUrl}/api/evolution/webhook/${encodeURIComponent(channelId)}`;
  }

  async createChannel(channel: { id: string; name: string }) {
    await this.provision(channel.id);
    return { ref: channel.id, status: "connecting" as const };
  }

  /**
   * Creates the channel's instance (or configures an existing one again, after a lost answer) with a
   * new webhook secret: `POST /instance/create` (connects and gives the first QR code), then
   * `POST /webhook/set` with the secret in `webhook.headers`.
   */
  private async provision(channelId: string) {
    const instanceName = channelId;
    const secret = randomBytes(24).toString("base64url");
    const hash = sha256(secret).toString("hex");
    // The row exists before the gateway can post its first webhook for this instance.
    await this.ctx.db
      .insert(evolutionInstances)
      .values({ channelId, instanceName, webhookTokenHash: hash })
      .onConflictDoUpdate({ target: evolutionInstances.channelId, set: { webhookTokenHash: hash, updatedAt: new Date() } });
    const webhook = {
      enabled: true,
      url: this.webhookUrl(channelId),
      headers: { [webhookTokenHeader]: secret },
      byEvents: false,
      base64: false,
      events: evolutionWebhookEvents,
    };
    try {
      const created = await this.ctx.client.request<{ qrcode?: { base64?: string; pairingCode?: string | null } }>("POST", "/instance/create", {
        // groupsIgnore=false: an instance that ignores groups never reports their events.
        body: { instanceName, integration: "WHATSAPP-BAILEYS", qrcode: true, groupsIgnore: false, webhook },
      });
      await this.savePairing(channelId, created?.qrcode);
    } catch (err) {
      // A retried create after a lost answer: the instance is there already, so configure it again below.
      const exists = err instanceof EvolutionHttpError && (err.status === 403 || err.status === 409) && /already in use|exists/i.test(err.message);
      if (!exists) unavailable(err, `Evolution API could not create instance ${instanceName}`);
    }
    try {
      await this.ctx.client.request("POST", `/webhook/set/${encodeURIComponent(instanceName)}`, { body: { webhook }, retry: true });
    } catch (err) {
      unavailable(err, `Evolution API could not set the webhook of ${instanceName}`);
    }
  }

  /**
   * The gateway lost the channel's instance (404): create it again, same name, new webhook secret.
   * The number must pair again: a paired channel becomes `disconnected`. One recreation at a time per channel.
   */
  recreate(channelId: string): Promise<void> {
    let pending = this.recreations.get(channelId);
    if (!pending) {
      pending = (async () => {
        console.warn(`[evolution] instance ${channelId} was lost by the gateway (404): creating it again`);
        await this.applyState(channelId, "close");
        await this.ctx.db
          .update(evolutionInstances)
          .set({ groups: null, groupsFetchedAt: null, qrCode: null, pairingCode: null })
          .where(eq(evolutionInstances.channelId, channelId));
        await this.provision(channelId);
      })().finally(() => this.recreations.delete(channelId));
      this.recreations.set(channelId, pending);
    }
    return pending;
  }

  /** One call on the channel's instance; a lost instance (404) is created again before the error goes on. */
  async onInstance<T>(channelId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (isLostInstance(err)) await this.recreate(channelId);
      throw err;
    }
  }

  /**
   * Keeps the latest QR code and pairing code for the dashboard. A pairing code is kept (with the time
   * it was made, `pairingUpdatedAt`) until a new one replaces it or the number pairs: answers and
   * `qrcode.updated` events without one (a QR-only session, a code not made yet) never erase it. While a
   * session pairs by number, every QR refresh makes WhatsApp a new code (`svc` ~377), which replaces it.
   */
  async savePairing(channelId: string, qr: { base64?: string | null; pairingCode?: string | null; code?: string } | undefined) {
    if (!qr || (!qr.base64 && !qr.pairingCode)) return;
    // The gateway repeats the current code in every answer until WhatsApp makes a new one: only a new one restarts the
    // expiry. Decided in the UPDATE itself: a webhook and a connect answer bringing the same new code at once (both
    // reading the old row first) each restarted it, and the expiry moved by a few milliseconds between two reads.
    const now = new Date();
    const code = qr.pairingCode;
    await this.ctx.db
      .update(evolutionInstances)
      .set({
        ...(qr.base64 ? { qrCode: qr.base64 } : {}),
        ...(code
          ? {
              pairingCode: code,
              pairingUpdatedAt: sql`case when ${evolutionInstances.pairingCode} is distinct from ${code} then ${tsParam(now)} else ${evolutionInstances.pairingUpdatedAt} end`,
            }
          : {}),
        updatedAt: now,
      })
      .where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * A send found the gateway down (connection refused, unknown host): the channel is offline
   * (`disconnected`, so its campaigns pause as `channel_offline` instead of claiming and releasing the
   * same groups in a loop) until the state poll reads the instance `open` again.
   */
  async markUnreachable(channelId: string) {
    const row = await this.row(channelId).catch(() => undefined);
    if (row?.state !== "open") return;
    await this.applyState(channelId, gatewayUnreachable).catch((e) => console.error(`[evolution] could not mark ${channelId} offline`, e));
  }

  /**
   * Records a state the gateway reported; emits `channel_status` when the channel status changed, or when the
   * gateway said why it closed the session (`loss`: the number's health follows it even when the channel was
   * already offline, e.g. Evolution's `logout.instance` came first). `ownNumber`: the number an `open` paired.
   * `connecting` for a paired number that was open is a reconnect: nothing changes within the grace, then the
   * channel is offline (our `reconnecting` state) until the gateway says `open` (docs/evolution.md#a-number-that-is-reconnecting).
   */
  async applyState(
    channelId: string,
    state: string,
    at = new Date(),
    extra: { loss?: ReturnType<typeof lossReason>; ownNumber?: string | null } = {},
  ): Promise<ChannelStatus> {
    // The gateway says the session is open: a reconnect being timed is over.
    if (state === "open") this.endReconnect(channelId);
    const row = await this.row(channelId);
    // A session that never opened has no number to judge (the pairing-code flow logs a connecting session out itself).
    const loss = state === "close" && row.pairedOnce ? extra.loss : undefined;
    if (loss && row.state === state) {
      await this.ctx.events.emit({ type: "channel_status", channelId, status: channelStatus(state, row.pairedOnce), at, ...loss });
      return channelStatus(state, row.pairedOnce);
    }
    if (row.pairedOnce && state === "connecting") {
      // Pairing again (the number was offline already), or a reconnect that already outlasted its grace: no change.
      if (row.state !== "open") return channelStatus(row.state, true);
      // Baileys reconnecting a paired number (Evolution does it silently on every close but 401/402/403/406, and 408 on
      // 2.4): it sends nothing meanwhile. A short reconnect changes nothing (no pause, no channel_status on every blip).
      const reconnect = this.startReconnect(channelId, at, true);
      if (at.getTime() - reconnect.since < this.graceMs) return "connected";
      state = reconnectingTooLong;
    }
    // After `refused` the gateway reads `close`: still no session, still `disconnected` until pairing is asked again.
    if (row.state === "refused" && state === "close") return channelStatus(row.state, row.pairedOnce);
    if (row.state === state) return channelStatus(state, row.pairedOnce);
    this.endReconnect(channelId);
    // Another pairing may bring another number.
    this.ownNumbers.delete(channelId);
    if (state === "open" && extra.ownNumber) this.ownNumbers.set(channelId, extra.ownNumber);
    const pairedOnce = row.pairedOnce || state === "open";
    const before = channelStatus(row.state, row.pairedOnce);
    const after = channelStatus(state, pairedOnce);
    const changed = await this.ctx.db
      .update(evolutionInstances)
      .set({
        state,
        pairedOnce,
        updatedAt: at,
        // A paired channel needs no QR code any more; a lost connection drops the cached groups' freshness.
        ...(state === "open" ? { qrCode: null, pairingCode: null, pairingRequestedAt: null } : {}),
      })
      .where(and(eq(evolutionInstances.channelId, channelId), eq(evolutionInstances.state, row.state)))
      .returning({ channelId: evolutionInstances.channelId });
    // Changed meanwhile by another path (the grace's timer and a refused send, or the poll, at the grace's end): decided
    // again from what it wrote, so one change is announced once, never twice.
    if (changed.length === 0) return this.applyState(channelId, state, at, extra);
    if (before !== after || loss) await this.ctx.events.emit({ type: "channel_status", channelId, status: after, at, ...loss });
    return after;
  }

  /** The reconnect being timed for this channel: started now unless one is (`gatewaySaid` once the gateway said it). */
  private startReconnect(channelId: string, at: Date, gatewaySaid: boolean): Reconnect {
    const known = this.reconnects.get(channelId);
    if (known) {
      known.gatewaySaid ||= gatewaySaid;
      return known;
    }
    const since = at.getTime();
    // When the grace ends the channel goes offline, sends or not (the state poll and the next send check it too).
    const timer = setTimeout(
      () => void this.graceOver(channelId).catch((e) => console.error(`[evolution] could not end the reconnect grace of ${channelId}`, e)),
      Math.max(0, since + this.graceMs - Date.now()) + 20,
    );
    timer.unref?.();
    const reconnect = { since, gatewaySaid, checkedAt: Date.now(), timer };
    this.reconnects.set(channelId, reconnect);
    return reconnect;
  }

  private endReconnect(channelId: string) {
    const known = this.reconnects.get(channelId);
    if (!known) return;
    clearTimeout(known.timer);
    this.reconnects.delete(channelId);
  }

  /**
   * A reconnect's grace is over: the channel cannot send, so it goes offline (`disconnected`; its pending deliveries
   * fail over) — unless the gateway, asked now, says the session is open again after a reconnect it reported (its
   * `open` webhook was missed). Sends refused while the gateway said `open` all along are not ended by that.
   */
  private async graceOver(channelId: string): Promise<ChannelStatus | undefined> {
    const reconnect = this.reconnects.get(channelId);
    if (!reconnect || Date.now() - reconnect.since < this.graceMs) return undefined;
    const row = await this.row(channelId).catch(() => undefined);
    if (row?.state !== "open") {
      this.endReconnect(channelId);
      return row ? channelStatus(row.state, row.pairedOnce) : undefined;
    }
    if (reconnect.gatewaySaid && (await this.liveState(channelId, row.instanceName).catch(() => undefined)) === "open") {
      this.endReconnect(channelId);
      return "connected";
    }
    console.warn(
      `[evolution] ${channelId} has been reconnecting for ${Math.round((Date.now() - reconnect.since) / 1000)} s: offline until the gateway says open`,
    );
    if (!reconnect.gatewaySaid) this.refusedOffline.add(channelId);
    return this.applyState(channelId, reconnectingTooLong);
  }

  /**
   * A send found the channel's row not `open`: may it go ahead? The gateway is asked (a webhook may have been missed),
   * unless the row is offline by our own verdict that the grace is over (`reconnecting`): sends were refused, or the
   * gateway said it was reconnecting, for longer than the grace. A claim made as the grace ended (the retry due just
   * after it) would otherwise ask, read `open` (which a gateway refusing sends says all along), bring the channel back
   * and start a new grace: its deliveries moved 30 s late. Such a channel comes back by the gateway's `open` webhook,
   * the state poll or a state read, never by a send.
   */
  async mayResend(channelId: string, state: string): Promise<boolean> {
    if (state === reconnectingTooLong) return false;
    return (await this.getStatus(channelId)) === "connected";
  }

  /**
   * Before a send: a number the gateway says is reconnecting sends nothing (its sends would answer `Connection
   * Closed`). Within the grace the send is handed back to be tried again in a moment, without losing an attempt;
   * past it the channel is offline. Only a reconnect the gateway reported holds sends back: refused sends while it
   * says `open` are tried again (a send that goes through ends it).
   */
  async checkReconnect(channelId: string) {
    const reconnect = this.reconnects.get(channelId);
    if (!reconnect?.gatewaySaid) return;
    // Every few seconds the gateway is asked again: its `open` may have been missed, or gone to another process.
    if (Date.now() - reconnect.checkedAt >= reconnectRetryMs) {
      reconnect.checkedAt = Date.now();
      const row = await this.row(channelId);
      if ((await this.liveState(channelId, row.instanceName).catch(() => undefined)) === "open") return this.endReconnect(channelId);
    }
    throw await this.reconnectError(channelId, `Channel ${channelId} is reconnecting`);
  }

  /**
   * A send answered `Connection Closed` (Baileys' socket is not open; nothing was sent). The gateway's own state,
   * asked now, tells a reconnect (`connecting`, or `close` with its stored row still `open`) from a close it gave up on;
   * a send refused while it says `open` starts a reconnect of ours. Within the grace the send is tried again in a
   * moment without losing an attempt; past it, or closed, the channel is offline (failover).
   */
  async connectionClosed(channelId: string, text: string): Promise<ProviderUnavailableError> {
    const at = new Date();
    const row = await this.row(channelId);
    // Sent as the grace ran out: the channel is offline already (no new grace for it).
    if (row.state === reconnectingTooLong) return new ProviderUnavailableError(`Channel ${channelId} is not connected: ${text}`);
    const live = await this.liveState(channelId, row.instanceName).catch(() => undefined);
    if (live !== undefined && live !== "open") {
      const status = await this.applyLive(channelId, row, live, at);
      if (status !== "connected") return new ProviderUnavailableError(`Channel ${channelId} is not connected: ${text}`);
    }
    // Back only by a read of `open` since the grace ran out on refused sends: offline again at once.
    const known = this.refusedOffline.has(channelId) && row.state === "open" && !this.reconnects.has(channelId);
    this.startReconnect(channelId, known ? new Date(at.getTime() - this.graceMs) : at, false);
    return this.reconnectError(channelId, `Channel ${channelId} answered ${text}`);
  }

  /** A send went through: whatever refused sends before it began are over (a reconnect the gateway reported included). */
  sent(channelId: string, startedAt: Date) {
    this.refusedOffline.delete(channelId);
    const reconnect = this.reconnects.get(channelId);
    if (reconnect && reconnect.since <= startedAt.getTime()) this.endReconnect(channelId);
  }

  /** Within the grace: try again in a moment (at most 5 s, or just after the grace ends); past it: offline. */
  private async reconnectError(channelId: string, what: string): Promise<ProviderUnavailableError> {
    const reconnect = this.reconnects.get(channelId);
    const left = reconnect ? reconnect.since + this.graceMs - Date.now() : 0;
    if (reconnect && left > 0)
      return new ProviderUnavailableError(`${what} (for ${Date.now() - reconnect.since} ms)`, { retryAfterMs: Math.min(reconnectRetryMs, left + 50) });
    const status = reconnect ? await this.graceOver(channelId) : "connected";
    if (status === "connected") return new ProviderUnavailableError(`${what}: trying again`, { retryAfterMs: 250 });
    return new ProviderUnavailableError(`${what}: reconnecting for longer than ${this.graceMs / 1000} s, offline until the gateway says open`);
  }

  /** `GET /instance/connectionState/{instance}`: the gateway's in-memory state of the session (no database read on its side). */
  private async connectionState(instanceName: string): Promise<string | undefined> {
    const res = await this.ctx.client.request<{ instance?: { state?: string } }>("GET", `/instance/connectionState/${encodeURIComponent(instanceName)}`, {
      retry: true,
    });
    return res?.instance?.state;
  }

  /** The gateway's connection state of the instance (a lost instance is created again and reads `close`). */
  async liveState(channelId: string, instanceName: string): Promise<string> {
    let state: string | undefined;
    try {
      state = await this.onInstance(channelId, () => this.connectionState(instanceName));
    } catch (err) {
      if (isLostInstance(err)) return "close";
      unavailable(err, `Evolution API cannot tell the state of ${instanceName}`);
    }
    if (!state) throw new ProviderUnavailableError(`Evolution API gave no state for ${instanceName}.`);
    return state;
  }

  async getStatus(channelId: string): Promise<ChannelStatus> {
    const row = await this.row(channelId);
    const state = await this.liveState(channelId, row.instanceName);
    if (this.recreations.has(channelId)) await this.recreations.get(channelId);
    return this.applyLive(channelId, row, state);
  }

  /**
   * A state read from `connectionState` (the gateway's memory, never stale), applied. A paired number the gateway
   * holds as `close` while our row says it was open is either reconnecting (2.4 waits 3 s before it reconnects; 2.3.x
   * between the close and the new socket) or closed for good: the gateway's stored row tells which — a silent
   * reconnect leaves it `open` — and carries the close's reason (one `fetchInstances?instanceName=`, only then).
   */
  private async applyLive(channelId: string, row: { state: string; pairedOnce: boolean; instanceName: string }, live: string, at = new Date()) {
    if (live === "close" && row.pairedOnce && (row.state === "open" || row.state === reconnectingTooLong)) {
      const stored = await this.storedRow(row.instanceName).catch(() => undefined);
      if (stored?.connectionStatus !== "close") return this.applyState(channelId, "connecting", at);
      return this.applyState(channelId, "close", at, { loss: await this.lossFor(stored.disconnectionReasonCode) });
    }
    return this.applyState(channelId, live, at);
  }

  /**
   * The missed-webhook safety net (every minute, see docs/evolution.md#missed-webhooks-the-state-poll): each channel's
   * `connectionState` — the gateway's in-memory state, no database read there — compared with ours. Only a change is
   * applied, through the webhook's path: a missed `open`; a close, whose reason comes from the instance's stored row
   * (a ban or a logout whose webhooks were lost changes the number's health as they would have); a silent reconnect
   * (`connecting`, which `fetchInstances` never shows: its row keeps `open`), timed by the grace. A lost instance
   * (404) is created again. A gateway that cannot be reached (or a 2.4 not activated) ends the pass. Returns how many
   * channels were checked.
   */
  async pollStates(): Promise<number> {
    const rows = await this.ctx.db
      .select({
        channelId: evolutionInstances.channelId,
        instanceName: evolutionInstances.instanceName,
        state: evolutionInstances.state,
        pairedOnce: evolutionInstances.pairedOnce,
      })
      .from(evolutionInstances);
    let checked = 0;
    let gatewayDown = false;
    await mapLimit(rows, 8, async (row) => {
      if (gatewayDown) return;
      let live: string | undefined;
      try {
        live = await this.onInstance(row.channelId, () => this.connectionState(row.instanceName));
      } catch (err) {
        if (isLostInstance(err)) live = "close";
        else if (err instanceof EvolutionUnreachableError) {
          gatewayDown = true;
          return;
        } else if (err instanceof EvolutionHttpError || err instanceof ProviderUnavailableError) return;
        else throw err;
      }
      if (!live) return;
      checked++;
      try {
        const reconnect = this.reconnects.get(row.channelId);
        // What we hold already (the common case): nothing to write, nothing more to ask.
        if (live !== row.state || (live === "open" && reconnect?.gatewaySaid)) await this.applyLive(row.channelId, row, live);
        if (this.reconnects.has(row.channelId)) await this.graceOver(row.channelId);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
      }
    });
    return checked;
  }

  /**
   * The gateway's stored row of one instance (`GET /instance/fetchInstances?instanceName=`), or undefined when the
   * answer is not such a row. Its status and disconnection fields, and its `_count` of that instance's messages,
   * contacts and chats (docs/evolution.md#missed-webhooks-the-state-poll): read only when something changed.
   */
  private async storedRow(instanceName: string): Promise<ListedInstance | undefined> {
    let res: unknown;
    try {
      res = await this.fetchInstances(instanceName);
    } catch (err) {
      if (err instanceof EvolutionHttpError) return undefined;
      unavailable(err, "Evolution API cannot list its instances");
    }
    const mine = (Array.isArray(res) ? (res as Partial<ListedInstance>[]) : []).find((i) => i?.name === instanceName);
    return typeof mine?.connectionStatus === "string" ? (mine as ListedInstance) : undefined;
  }

  /** `GET /instance/fetchInstances?instanceName=`: that instance's database row (404 when the gateway lost it). */
  private fetchInstances(instanceName: string) {
    return this.ctx.client.request<unknown>("GET", "/instance/fetchInstances", { query: { instanceName }, retry: true });
  }

  /**
   * `logout.instance`: Evolution posts it only for a close it does not reconnect, after its database took that close's
   * reason code (`svc` ~441–459, 2.3.7). The code is read there now, so the status and the number's health change in one
   * `channel_status`; the `connection.update` that follows with the same reason then changes nothing. Unreadable: the
   * close alone, its reason comes with that `connection.update` (or the state poll).
   */
  async loggedOut(channelId: string, at: Date) {
    const row = await this.row(channelId);
    const stored = await this.storedRow(row.instanceName).catch(() => undefined);
    const loss = stored?.connectionStatus === "close" ? await this.lossFor(stored.disconnectionReasonCode) : undefined;
    await this.applyState(channelId, "close", at, { loss });
  }

  async disconnectChannel(channelId: string) {
    const row = await this.row(channelId);
    try {
      await this.onInstance(channelId, () => this.ctx.client.request("DELETE", `/instance/logout/${encodeURIComponent(row.instanceName)}`, { retry: true }));
    } catch (err) {
      // Evolution answers 400 "is not connected" when there is nothing to log out; a lost instance was created again.
      if (!(err instanceof EvolutionHttpError && (err.status === 400 || isLostInstance(err))))
        unavailable(err, `Evolution API could not log ${row.instanceName} out`);
    }
    await this.applyState(channelId, "close");
  }

  async deleteChannel(channelId: string) {
    const row = await this.row(channelId);
    try {
      if (row.state === "open") await this.disconnectChannel(channelId);
      await this.ctx.client.request("DELETE", `/instance/delete/${encodeURIComponent(row.instanceName)}`, { retry: true });
    } catch (err) {
      if (!(err instanceof EvolutionHttpError && err.status === 404)) unavailable(err, `Evolution API could not delete ${row.instanceName}`);
    }
    await this.ctx.db.delete(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * The paired number: `ownerJid` of `GET /instance/fetchInstances?instanceName=` (or the `wuid` of the
   * `connection.update` that opened it), digits only; kept in memory while the channel stays connected.
   */
  async ownNumber(channelId: string): Promise<string | null> {
    const known = this.ownNumbers.get(channelId);
    if (known) return known;
    const row = await this.row(channelId).catch(() => undefined);
    if (!row?.pairedOnce) return null;
    try {
      const res = (await this.fetchInstances(row.instanceName)) as { name?: string; ownerJid?: string | null }[];
      // Only this instance's own entry: a gateway that ignored the filter lists every instance, and another one's
      // number (maybe another tenant's) is never ours.
      const mine = (Array.isArray(res) ? res : []).find((i) => i?.name === row.instanceName);
      const digits = jidNumber(mine?.ownerJid ?? undefined);
      if (digits && row.state === "open") this.ownNumbers.set(channelId, digits);
      return digits;
    } catch (err) {
      unavailable(err, `Evolution API cannot tell the number of ${row.instanceName}`);
    }
  }
}
