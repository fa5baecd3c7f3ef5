import { eq } from "drizzle-orm";
import { evolutionInstances } from "../../../db/schema";
import { type ChannelStatus, type PairingInfo, type PairingOptions, ProviderUnavailableError } from "../provider";
import { evolutionErrorText, EvolutionHttpError } from "./client";
import { unavailable, type EvolutionContext } from "./context";
import type { Instances } from "./instances";

/** WhatsApp's pairing codes stop working about a minute after they were made. */
export const pairingCodeLifetimeMs = 60_000;

/** Pairing a number by QR code or pairing code. */
export class Pairings {
  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
  ) {}

  /** `GET /instance/connect/{name}`: Evolution answers its errors as HTTP 200 `{error: true, message}`. */
  private async connect(channelId: string, instanceName: string, number?: string) {
    const res = await this.instances.onInstance(channelId, () =>
      this.ctx.client.request<{
        base64?: string;
        pairingCode?: string | null;
        code?: string;
        instance?: { state?: string };
        error?: boolean;
        message?: unknown;
      }>("GET", `/instance/connect/${encodeURIComponent(instanceName)}`, { query: number ? { number } : {}, retry: true }),
    );
    if (res?.error === true) throw new ProviderUnavailableError(`Evolution API could not connect ${instanceName}: ${evolutionErrorText(res, "error")}`);
    return res;
  }

  /**
   * A new pairing session started. A number that never paired is `connecting` again (from `refused`);
   * one that paired before stays `disconnected` until it pairs (applyState ignores its `connecting`).
   */
  private async markConnecting(channelId: string): Promise<ChannelStatus> {
    const row = await this.instances.row(channelId);
    if (!row.pairedOnce) return this.instances.applyState(channelId, "connecting");
    await this.ctx.db.update(evolutionInstances).set({ state: "connecting", updatedAt: new Date() }).where(eq(evolutionInstances.channelId, channelId));
    return "disconnected";
  }

  /** Waits until the gateway reports the instance `close` (after a logout). */
  private async waitForClose(channelId: string, instanceName: string) {
    const end = Date.now() + (this.ctx.opts.closeWaitMs ?? 15_000);
    for (;;) {
      const state = await this.instances.liveState(channelId, instanceName);
      if (state === "close") return;
      if (Date.now() > end)
        throw new ProviderUnavailableError(`Evolution API did not close the session of ${instanceName} in time; ask for the pairing code again.`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * Pairing data for the dashboard. Without options it only reads: the live QR code while a session is
   * pairing, and the latest pairing code with its expiry. `restart` starts a new session when none is
   * live (logged out, or `refused` after too many QR codes). A pairing code (`phoneNumber`) comes only
   * from a closed session (Evolution ignores `number` while `connecting`): logout, wait for `close`,
   * then connect with the number. The gateway answers that connect after 2 s, usually before WhatsApp
   * gave the code: it is then `pairingCodePending`, and comes in `qrcode.updated` or in the answer of a
   * later read's connect (which, while connecting, answers the current QR code and code).
   */
  async pairing(channelId: string, options: PairingOptions = {}): Promise<PairingInfo> {
    const row = await this.instances.row(channelId);
    let status = await this.instances.getStatus(channelId);
    if (status === "connected") return { status, qrCode: null, pairingCode: null, pairingCodeExpiresAt: null, sessionClosed: false, automatic: false };
    const state = (await this.instances.row(channelId)).state;
    try {
      if (options.phoneNumber) {
        if (state !== "close") {
          try {
            await this.instances.onInstance(channelId, () =>
              this.ctx.client.request("DELETE", `/instance/logout/${encodeURIComponent(row.instanceName)}`, { retry: true }),
            );
          } catch (err) {
            // 400 "is not connected": nothing to log out.
            if (!(err instanceof EvolutionHttpError && err.status === 400)) throw err;
          }
          await this.waitForClose(channelId, row.instanceName);
        }
        // The old code died with its session; until the new one comes, the code is pending.
        await this.ctx.db
          .update(evolutionInstances)
          .set({ pairingCode: null, pairingUpdatedAt: null, pairingRequestedAt: new Date() })
          .where(eq(evolutionInstances.channelId, channelId));
        // Evolution answers after a fixed 2 s, often before WhatsApp gave the code: it comes later in
        // QRCODE_UPDATED or the next connect's answer (the dashboard's poll asks for it).
        const res = await this.connect(channelId, row.instanceName, options.phoneNumber);
        await this.instances.savePairing(channelId, res);
        status = await this.markConnecting(channelId);
      } else if (state === "connecting" || options.restart) {
        if (state !== "connecting")
          await this.ctx.db
            .update(evolutionInstances)
            .set({ pairingCode: null, pairingUpdatedAt: null, pairingRequestedAt: null })
            .where(eq(evolutionInstances.channelId, channelId));
        const res = await this.connect(channelId, row.instanceName);
        if (res?.instance?.state === "open")
          return {
            status: await this.instances.applyState(channelId, "open"),
            qrCode: null,
            pairingCode: null,
            pairingCodeExpiresAt: null,
            sessionClosed: false,
            automatic: false,
          };
        await this.instances.savePairing(channelId, res);
        if (state !== "connecting") status = await this.markConnecting(channelId);
      }
    } catch (err) {
      unavailable(err, `Evolution API cannot start pairing ${row.instanceName}`);
    }
    const fresh = await this.instances.row(channelId);
    const live = fresh.state === "connecting";
    const expiresAt = fresh.pairingCode && fresh.pairingUpdatedAt ? new Date(fresh.pairingUpdatedAt.getTime() + pairingCodeLifetimeMs) : null;
    // Asked for and not come yet: pending for as long as a code would live (then the page offers to ask again).
    const pending = live && !fresh.pairingCode && fresh.pairingRequestedAt !== null && Date.now() - fresh.pairingRequestedAt.getTime() < pairingCodeLifetimeMs;
    return {
      status,
      qrCode: live ? fresh.qrCode : null,
      pairingCode: live ? fresh.pairingCode : null,
      pairingCodeExpiresAt: live ? expiresAt : null,
      pairingCodePending: pending,
      sessionClosed: !live,
      automatic: false,
    };
  }
}
