import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { tsParam } from "../../../db/errors";
import { evolutionInstances } from "../../../db/schema";
import { type ChannelStatus, type NumberLossReason, ProviderUnavailableError } from "../provider";
import { EvolutionHttpError } from "./client";
import { type EvolutionContext, isLostInstance, sha256, unavailable } from "./context";
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
 * Evolution reports a close only for the codes it does not reconnect: 401, 402, 403, 406 (and 408 from 2.4.0-rc);
 * Baileys' DisconnectReason names 401 loggedOut and 403 forbidden, Evolution's commit 258f5675 402 a temporary and
 * 406 a permanent ban. Anything else (408 a lost connection, 428, 440, 500, 515…) is a plain disconnect.
 */
export function lossReason(statusReason: unknown): { reason: NumberLossReason; detail: string } | undefined {
  const code = Number(statusReason);
  if (code === 401) return { reason: "logged_out", detail: "statusReason 401 (loggedOut)" };
  if (code === 402) return { reason: "restricted", detail: "statusReason 402 (temporary ban)" };
  if (code === 403) return { reason: "banned", detail: "statusReason 403 (forbidden)" };
  if (code === 406) return { reason: "banned", detail: "statusReason 406 (permanent ban)" };
  return undefined;
}

/** One instance as `GET /instance/fetchInstances` lists it (the gateway's database row; the fields the poll reads). */
interface ListedInstance {
  name: string;
  /** `open`, `connecting` or `close` (the database column, not the in-memory state `connectionState` answers). */
  connectionStatus: string;
  ownerJid?: string | null;
  /** Baileys' code of the latest close Evolution did not reconnect, and when; kept after a later pairing. */
  disconnectionReasonCode: number | null;
  disconnectionAt?: string | null;
}

/** One Evolution instance per channel: provisioning, its connection state, the channel's status and number. */
export class Instances {
  /** Each connected channel's own number, once read (dropped when the channel's state changes). */
  readonly ownNumbers = new Map<string, string>();
  private recreations = new Map<string, Promise<void>>();
  /** The latest close with a reason the state poll applied, per channel (`code@disconnectionAt`): applied once. */
  private polledCloses = new Map<string, string>();

  constructor(private readonly ctx: EvolutionContext) {}

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
   */
  async applyState(channelId: string, state: string, at = new Date(), extra: { loss?: ReturnType<typeof lossReason>; ownNumber?: string | null } = {}) {
    const row = await this.row(channelId);
    // A session that never opened has no number to judge (the pairing-code flow logs a connecting session out itself).
    const loss = state === "close" && row.pairedOnce ? extra.loss : undefined;
    if (loss && row.state === state) {
      await this.ctx.events.emit({ type: "channel_status", channelId, status: channelStatus(state, row.pairedOnce), at, ...loss });
      return channelStatus(state, row.pairedOnce);
    }
    // Baileys passes through `connecting` while it reconnects a paired number: not a status change
    // (a real loss arrives as `close`), so campaigns don't pause and resume on every reconnect.
    if (row.pairedOnce && state === "connecting") return channelStatus(row.state, true);
    // After `refused` the gateway reads `close`: still no session, still `disconnected` until pairing is asked again.
    if (row.state === "refused" && state === "close") return channelStatus(row.state, row.pairedOnce);
    if (row.state === state) return channelStatus(state, row.pairedOnce);
    // Another pairing may bring another number.
    this.ownNumbers.delete(channelId);
    if (state === "open" && extra.ownNumber) this.ownNumbers.set(channelId, extra.ownNumber);
    const pairedOnce = row.pairedOnce || state === "open";
    const before = channelStatus(row.state, row.pairedOnce);
    const after = channelStatus(state, pairedOnce);
    await this.ctx.db
      .update(evolutionInstances)
      .set({
        state,
        pairedOnce,
        updatedAt: at,
        // A paired channel needs no QR code any more; a lost connection drops the cached groups' freshness.
        ...(state === "open" ? { qrCode: null, pairingCode: null, pairingRequestedAt: null } : {}),
      })
      .where(eq(evolutionInstances.channelId, channelId));
    if (before !== after || loss) await this.ctx.events.emit({ type: "channel_status", channelId, status: after, at, ...loss });
    return after;
  }

  /** The gateway's connection state of the instance (a lost instance is created again and reads `close`). */
  async liveState(channelId: string, instanceName: string): Promise<string> {
    let state: string | undefined;
    try {
      const res = await this.onInstance(channelId, () =>
        this.ctx.client.request<{ instance?: { state?: string } }>("GET", `/instance/connectionState/${encodeURIComponent(instanceName)}`, { retry: true }),
      );
      state = res?.instance?.state;
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
    return this.applyState(channelId, state);
  }

  /**
   * The missed-webhook safety net (every minute, see docs/evolution.md#missed-webhooks-the-state-poll): one
   * `GET /instance/fetchInstances` lists every instance as the gateway's database holds it. Each of our channels
   * takes its listed state through `applyState`, the webhook's path: a `close` with a reason code (a ban or a logout
   * whose webhooks were lost) changes the channel and the number's health as `connection.update` would have, even
   * for a channel we think connected. An instance the list lacks is asked alone (a lost one answers 404 and is
   * created again). A gateway whose list has no `disconnectionReasonCode` is asked channel by channel, as before,
   * for the channels not connected. Returns how many channels were checked.
   */
  async pollStates(): Promise<number> {
    const rows = await this.ctx.db
      .select({ channelId: evolutionInstances.channelId, instanceName: evolutionInstances.instanceName, state: evolutionInstances.state })
      .from(evolutionInstances);
    if (rows.length === 0) return 0;
    let listed: Map<string, ListedInstance> | undefined;
    try {
      listed = await this.listInstances();
    } catch (err) {
      // The gateway is down (or a 2.4 not activated): nothing to learn this pass.
      if (err instanceof ProviderUnavailableError) return 0;
      throw err;
    }
    let checked = 0;
    for (const row of rows) {
      const gateway = listed?.get(row.instanceName);
      if (!listed && row.state === "open") continue;
      checked++;
      try {
        if (gateway) await this.applyListed(row.channelId, row.state, gateway);
        else await this.getStatus(row.channelId);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
      }
    }
    return checked;
  }

  /**
   * Every instance the gateway holds, by name: its database rows (prisma `Instance`, docs/evolution.md#missed-webhooks-the-state-poll).
   * Undefined when the answer is not such a list (a gateway without `disconnectionReasonCode`): the poll then asks
   * each channel's `connectionState`.
   */
  private async listInstances(instanceName?: string): Promise<Map<string, ListedInstance> | undefined> {
    let res: unknown;
    try {
      res = await this.fetchInstances(instanceName);
    } catch (err) {
      if (err instanceof EvolutionHttpError) return undefined;
      unavailable(err, "Evolution API cannot list its instances");
    }
    if (!Array.isArray(res)) return undefined;
    const listed = new Map<string, ListedInstance>();
    for (const i of res as Partial<ListedInstance>[]) {
      if (typeof i?.name !== "string" || typeof i.connectionStatus !== "string" || !("disconnectionReasonCode" in i)) return undefined;
      listed.set(i.name, i as ListedInstance);
    }
    return listed;
  }

  /** `GET /instance/fetchInstances`: every instance's database row, or `instanceName`'s alone (404 when the gateway lost it). */
  private fetchInstances(instanceName?: string) {
    return this.ctx.client.request<unknown>("GET", "/instance/fetchInstances", { ...(instanceName ? { query: { instanceName } } : {}), retry: true });
  }

  /**
   * `logout.instance`: Evolution posts it only for a close it does not reconnect, after its database took that close's
   * reason code (`svc` ~441–459, 2.3.7). The code is read there now, so the status and the number's health change in one
   * `channel_status`; the `connection.update` that follows with the same reason then changes nothing. Unreadable: the
   * close alone, its reason comes with that `connection.update` (or the state poll).
   */
  async loggedOut(channelId: string, at: Date) {
    const row = await this.row(channelId);
    const listed = (await this.listInstances(row.instanceName).catch(() => undefined))?.get(row.instanceName);
    const loss = listed?.connectionStatus === "close" ? lossReason(listed.disconnectionReasonCode) : undefined;
    await this.applyState(channelId, "close", at, { loss });
  }

  /**
   * An instance's listed state, applied as its webhook would be. The gateway keeps the reason of the latest close
   * that it did not reconnect (401/402/403/406) until another such close, across later pairings: it counts only
   * while the instance is `close`, and the poll applies each close (code and time) once.
   */
  private async applyListed(channelId: string, known: string, gateway: ListedInstance) {
    const state = gateway.connectionStatus;
    const loss = state === "close" ? lossReason(gateway.disconnectionReasonCode) : undefined;
    const closeSeen = loss ? `${gateway.disconnectionReasonCode}@${gateway.disconnectionAt ?? ""}` : undefined;
    const news = closeSeen !== this.polledCloses.get(channelId);
    const ownNumber = state === "open" ? jidNumber(gateway.ownerJid ?? undefined) : null;
    // The state the poll already read, and no close to apply: applyState would read the row again and change nothing.
    if (state !== known || (news && loss)) await this.applyState(channelId, state, new Date(), { loss: news ? loss : undefined, ownNumber });
    if (closeSeen) this.polledCloses.set(channelId, closeSeen);
    else this.polledCloses.delete(channelId);
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
