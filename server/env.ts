import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Every environment variable the service reads, in one place (the README's table mirrors this). */
export const env = {
  get port() {
    return Number(process.env.PORT ?? 3000);
  },
  get appUrl() {
    return (process.env.APP_URL ?? `http://localhost:${this.port}`).replace(/\/$/, "");
  },
  get dataDir() {
    return path.resolve(/*turbopackIgnore: true*/ process.env.DATA_DIR ?? ".data");
  },
  get databaseUrl() {
    return process.env.DATABASE_URL || undefined;
  },
  get messagingProvider(): "simulator" | "evolution" {
    return process.env.MESSAGING_PROVIDER === "evolution" ? "evolution" : "simulator";
  },
  get simulatorPairingMs() {
    return Number(process.env.SIMULATOR_PAIRING_MS ?? 0);
  },
  get simulatorGroupsPerChannel() {
    return Number(process.env.SIMULATOR_GROUPS_PER_CHANNEL ?? 20);
  },
  /** Days the simulator's message log is kept (the hourly maintenance job deletes older messages). */
  get simulatorRetentionDays() {
    return Number(process.env.SIMULATOR_RETENTION_DAYS ?? 7);
  },
  /** Evolution API v2 (MESSAGING_PROVIDER=evolution): the gateway's address, global API key, and how we call it. */
  evolution: {
    get apiUrl() {
      return (process.env.EVOLUTION_API_URL ?? "http://localhost:8080").replace(/\/$/, "");
    },
    get apiKey() {
      return process.env.EVOLUTION_API_KEY ?? "";
    },
    /** Where the gateway posts its webhooks (our /api/evolution/webhook/…); defaults to APP_URL. */
    get webhookBaseUrl() {
      return (process.env.EVOLUTION_WEBHOOK_BASE_URL ?? env.appUrl).replace(/\/$/, "");
    },
    get timeoutMs() {
      return Number(process.env.EVOLUTION_TIMEOUT_MS ?? 20_000);
    },
    get retries() {
      return Number(process.env.EVOLUTION_RETRIES ?? 2);
    },
    get groupsTtlSeconds() {
      return Number(process.env.EVOLUTION_GROUPS_TTL_SECONDS ?? 600);
    },
    /** One group listing may take minutes on a large account (one picture per group); it is never retried. */
    get groupsTimeoutMs() {
      return Number(process.env.EVOLUTION_GROUPS_TIMEOUT_MS ?? 300_000);
    },
    /** Between two state polls of the channels that are not connected (embedded runner; 0 turns it off). */
    get statePollSeconds() {
      return Number(process.env.EVOLUTION_STATE_POLL_SECONDS ?? 60);
    },
    /**
     * A send whose answer was lost is looked up on the gateway this long after the attempt, and resent
     * only after two negative look-ups this far apart (CONTRACT.md §5). Default 300.
     */
    get reconcileAfterSeconds() {
      const n = Number(process.env.EVOLUTION_RECONCILE_AFTER_SECONDS ?? 300);
      return Number.isFinite(n) && n >= 0 ? n : 300;
    },
  },
  /**
   * Proxy hops in front of the server whose X-Forwarded-For/-Host/-Proto are believed (CONTRACT.md §4
   * "Client address"). 0 (default): the client is the TCP peer and those headers are ignored.
   */
  get trustProxy() {
    const n = Number(process.env.TRUST_PROXY ?? 0);
    return Number.isInteger(n) && n > 0 ? n : 0;
  },
  get defaultChannelLimit() {
    return Number(process.env.DEFAULT_CHANNEL_LIMIT ?? 10);
  },
  /** How long a key that authenticated skips the lookup (0 disables the cache). */
  get apiKeyCacheSeconds() {
    return Number(process.env.API_KEY_CACHE_SECONDS ?? 5);
  },
  get segmentGroupLimit() {
    return Number(process.env.SEGMENT_GROUP_LIMIT ?? 50_000);
  },
  rateLimit: {
    get apiKeyPerMinute() {
      return Number(process.env.RATE_LIMIT_API_KEY_PER_MINUTE ?? 300);
    },
    get partnerPerMinute() {
      return Number(process.env.RATE_LIMIT_PARTNER_PER_MINUTE ?? 120);
    },
    get oauthIpPerMinute() {
      return Number(process.env.RATE_LIMIT_OAUTH_IP_PER_MINUTE ?? 30);
    },
    get failedAuthPerMinute() {
      return Number(process.env.RATE_LIMIT_FAILED_AUTH_PER_MINUTE ?? 20);
    },
    /** Dashboard sign-in: failed attempts per account (email) in 15 minutes, then every attempt is refused unhashed. */
    get signInFailuresPerAccount() {
      return Number(process.env.RATE_LIMIT_SIGN_IN_PER_ACCOUNT ?? 10);
    },
    /** Dashboard sign-in: failed attempts per client address in 15 minutes. */
    get signInFailuresPerAddress() {
      return Number(process.env.RATE_LIMIT_SIGN_IN_PER_ADDRESS ?? 50);
    },
    /** Dashboard sign-up: accounts created per client address in an hour. */
    get signUpsPerAddressPerHour() {
      return Number(process.env.RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR ?? 10);
    },
  },
  webhooks: {
    /** Delays (ms) before each retry of a failed delivery; after the last one the delivery is given up. */
    get retrySchedule(): number[] {
      const raw = process.env.WEBHOOK_RETRY_SCHEDULE;
      if (!raw) return [5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];
      return raw
        .split(",")
        .map((s) => Number(s.trim()))
        .filter((n) => Number.isFinite(n) && n >= 0);
    },
    get timeoutMs() {
      return Number(process.env.WEBHOOK_TIMEOUT_MS ?? 10_000);
    },
    /** Days finished deliveries (with their attempts) and fanned-out outbox events are kept. */
    get retentionDays() {
      return Number(process.env.WEBHOOK_RETENTION_DAYS ?? 30);
    },
    /** Hours the previous signing secret keeps signing beside the new one after a rotation. */
    get secretGraceHours() {
      return Number(process.env.WEBHOOK_SECRET_GRACE_HOURS ?? 24);
    },
    /** Deliveries of one tenant in flight at once (distinct campaigns/channels; one at a time per campaign). */
    get tenantConcurrency() {
      return Number(process.env.WEBHOOK_TENANT_CONCURRENCY ?? 16);
    },
    /**
     * WEBHOOK_ALLOW_PRIVATE=1 lets webhook URLs (and media URLs) reach private, loopback and link-local
     * addresses, in every mode, production included: self-hosters deliver to receivers on their own
     * network. The server logs a warning at start when it is on (startupWarnings).
     */
    get allowPrivate(): boolean {
      return process.env.WEBHOOK_ALLOW_PRIVATE === "1";
    },
  },
  get isProduction() {
    return process.env.NODE_ENV === "production";
  },
};

/** A secret from the environment, or one generated once and kept under DATA_DIR. */
const secrets = new Map<string, string>();

export function persistentSecret(envName: string, fileName: string, bytes = 32): string {
  const fromEnv = process.env[envName];
  if (fromEnv) return fromEnv;
  const file = path.join(env.dataDir, fileName);
  let secret = secrets.get(file);
  if (secret) return secret;
  if (existsSync(file)) {
    secret = readFileSync(file, "utf8").trim();
  } else {
    mkdirSync(env.dataDir, { recursive: true });
    secret = randomBytes(bytes).toString("base64url");
    writeFileSync(file, secret, { mode: 0o600, flag: "wx" });
  }
  secrets.set(file, secret);
  return secret;
}

/** Inngest drives dispatch when it is configured; otherwise the in-process runner does. */
export const inngestConfigured = () =>
  Boolean(process.env.INNGEST_EVENT_KEY || process.env.INNGEST_SIGNING_KEY || process.env.INNGEST_DEV);

/** Settings an operator should know are on, logged once when the server starts (instrumentation.ts). */
export function startupWarnings(): string[] {
  const warnings: string[] = [];
  if (env.webhooks.allowPrivate) {
    warnings.push(
      "WEBHOOK_ALLOW_PRIVATE=1: webhook and media URLs may point to private, loopback and link-local addresses. Set it only when receivers live on your own network.",
    );
  }
  return warnings;
}
