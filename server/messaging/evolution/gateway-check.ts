import { EvolutionHttpError, EvolutionNotActivatedError } from "./client";
import type { EvolutionContext } from "./context";

/** The gateway itself: its version (read again now and then) and the start-up check. */
export class Gateway {
  private versionProbe: { value: Promise<string | null>; at: number } | undefined;

  constructor(private readonly ctx: EvolutionContext) {}

  /**
   * The gateway's version (`GET /`). Read again after `versionTtlMs` (default 10 min), whenever a channel
   * (re)connects (upgrading the gateway restarts it, and every instance reconnects), and by the start-up
   * check; a failed read is tried again next time.
   */
  private gatewayVersion(fresh = false): Promise<string | null> {
    const now = Date.now();
    if (fresh || !this.versionProbe || now - this.versionProbe.at >= (this.ctx.opts.versionTtlMs ?? 600_000)) {
      const value: Promise<string | null> = this.ctx.client
        .request<{ version?: unknown }>("GET", "/", { retry: true })
        .then((r) => (typeof r?.version === "string" ? r.version : null))
        .catch((err) => {
          if (this.versionProbe?.value === value) this.versionProbe = undefined;
          throw err;
        });
      this.versionProbe = { value, at: now };
    }
    return this.versionProbe.value;
  }

  /** A connection (re)established: the gateway may have been upgraded meanwhile, so its version is read again. */
  forgetVersion() {
    this.versionProbe = undefined;
  }

  /** The gateway's version as last read (null when it cannot be read now). */
  version(): Promise<string | null> {
    return this.gatewayVersion().catch(() => null);
  }

  /**
   * Whether votes on our polls reach the webhook: 2.3.7 decrypts a vote and posts it as a `messages.upsert` of type
   * pollUpdateMessage; ≤ 2.3.6 skips vote messages before any webhook (docs/evolution.md#polls). Unknown version: no.
   */
  async reportsPollVotes(): Promise<boolean> {
    const version = await this.gatewayVersion().catch(() => null);
    return version !== null && compareVersions(version, "2.3.7") >= 0;
  }

  /** 2.4.0 and later keep our `messageId` for text and media (never for audio); older ones make their own ids. Unknown counts as older. */
  async keepsMessageIds(): Promise<boolean> {
    const version = await this.gatewayVersion().catch(() => null);
    return version !== null && compareVersions(version, "2.4.0") >= 0;
  }

  /**
   * The start-up check of the gateway: `GET /` (its version), the API key (`GET /instance/fetchInstances`)
   * and what can be seen of docs/evolution.md's prerequisites; the rest are reminders. Never throws.
   */
  async checkGateway(): Promise<GatewayCheck> {
    const warnings: string[] = [];
    let version: string | null = null;
    let reachable = false;
    try {
      version = await this.gatewayVersion(true);
      reachable = true;
    } catch (err) {
      warnings.push(`Evolution API at ${this.ctx.opts.apiUrl} cannot be reached: ${(err as Error).message}. Channels cannot pair or send until it answers.`);
    }
    if (reachable) {
      if (!version) warnings.push("Evolution API did not report its version (GET /): it may not be Evolution API v2.");
      else if (compareVersions(version, "2.4.0") < 0) {
        warnings.push(
          `Evolution API ${version} ignores the messageId we ask for (only 2.4.0 and later keep it): a send whose answer was lost is reconciled by a fingerprint of its content (group + text), and a voice note or captionless media with a lost answer is never resent automatically.`,
        );
      }
      try {
        const instances = await this.ctx.client.request<{ name?: string; Setting?: { groupsIgnore?: boolean } }[]>("GET", "/instance/fetchInstances", {
          retry: false,
        });
        const ignoring = (Array.isArray(instances) ? instances : [])
          .filter((i) => i?.Setting?.groupsIgnore === true && i.name?.startsWith("channel_"))
          .map((i) => i.name);
        if (ignoring.length)
          warnings.push(
            `Instances with groupsIgnore=true never report group events: ${ignoring.join(", ")}. Set groupsIgnore=false (POST /settings/set/{instance}).`,
          );
      } catch (err) {
        if (err instanceof EvolutionNotActivatedError)
          warnings.push(
            `Evolution API${version ? ` ${version}` : ""} is not activated: it answers every call with 503 LICENSE_REQUIRED, so channels cannot pair, send or manage groups until it is${err.registerUrl ? ` (${err.registerUrl})` : ""}.`,
          );
        else if (err instanceof EvolutionHttpError && (err.status === 401 || err.status === 403))
          warnings.push("Evolution API refused EVOLUTION_API_KEY (401): set it to the gateway's AUTHENTICATION_API_KEY.");
        else warnings.push(`Evolution API could not list its instances: ${(err as Error).message}`);
      }
    }
    if (/^https?:\/\/(localhost|127\.|\[::1\])/.test(this.ctx.opts.webhookBaseUrl) && !/^https?:\/\/(localhost|127\.|\[::1\])/.test(this.ctx.opts.apiUrl)) {
      warnings.push(
        `EVOLUTION_WEBHOOK_BASE_URL (${this.ctx.opts.webhookBaseUrl}) is a loopback address but the gateway runs elsewhere: it cannot post its events to us.`,
      );
    }
    return { provider: "evolution", checkedAt: new Date().toISOString(), reachable, version, warnings, reminders: gatewayReminders };
  }
}

/** What the start-up check of the gateway found (shown in the log and on the dashboard's channels page). */
export interface GatewayCheck {
  provider: "evolution";
  checkedAt: string;
  reachable: boolean;
  version: string | null;
  warnings: string[];
  /** Prerequisites that cannot be seen from outside the gateway. */
  reminders: string[];
}

/** The deployment prerequisites (docs/evolution.md) that the gateway does not let us check. */
export const gatewayReminders = [
  "DATABASE_SAVE_DATA_NEW_MESSAGE=true on the gateway: without it /chat/findMessages is always empty and a send whose answer was lost cannot be confirmed.",
  "CORS_ORIGIN=* on the gateway: requests without an Origin header (ours) can otherwise get 500.",
  "DEL_INSTANCE=false on the gateway: otherwise it deletes logged-out instances (we create them again, but the number must pair again).",
  "A group-metadata cache on the gateway (CACHE_REDIS_ENABLED=true or CACHE_LOCAL_ENABLED=true) to avoid WhatsApp's rate-overlimit on group sends.",
];

/** Compares dotted versions numerically, ignoring a pre-release suffix (2.4.0-rc1 counts as 2.4.0). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^v/i, "")
      .split(/[-+]/)[0]
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
