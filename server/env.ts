import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
const msList = z
  .string()
  .transform((raw) => raw.split(",").map((s) => s.trim()))
  .pipe(z.array(z.string().regex(/^\d+$/).transform(Number)));
const url = z.url({ protocol: /^https?$/ });
const flag = z.enum(["0", "1"]);

/**
 * Every environment variable the service reads, as docs/operations.md's configuration table lists them:
 * its schema and, for the error message, what it must be. An empty value counts as unset.
 */
const variables = {
  PORT: [int(1, 65535), "an integer from 1 to 65535"],
  APP_URL: [url, "an http(s) URL"],
  DATA_DIR: [z.string(), "a path"],
  DATABASE_URL: [z.string().regex(/^postgres(ql)?:\/\//), "a postgres:// URL"],
  DB_STATEMENT_LOG: [z.string(), "a file path"],
  DATABASE_POOL_SIZE: [int(1, 500), "an integer from 1 to 500"],
  NEXTAUTH_SECRET: [z.string(), "a string"],
  NEXTAUTH_URL: [url, "an http(s) URL"],
  MESSAGING_PROVIDER: [z.enum(["simulator", "evolution"]), "simulator or evolution"],
  EVOLUTION_API_URL: [url, "an http(s) URL"],
  EVOLUTION_API_KEY: [z.string(), "a string"],
  EVOLUTION_WEBHOOK_BASE_URL: [url, "an http(s) URL"],
  EVOLUTION_TIMEOUT_MS: [int(1), "a positive integer"],
  EVOLUTION_RETRIES: [int(0), "a non-negative integer"],
  EVOLUTION_GROUPS_TTL_SECONDS: [int(0), "a non-negative integer"],
  ENCRYPTION_KEY: [z.string(), "a string"],
  ENCRYPTION_KEY_PREVIOUS: [z.string(), "comma-separated keys"],
  SIMULATOR_PAIRING_MS: [int(0), "a non-negative integer"],
  SIMULATOR_GROUPS_PER_CHANNEL: [int(1), "a positive integer"],
  SIMULATOR_RETENTION_DAYS: [int(1), "a positive integer"],
  DEFAULT_CHANNEL_LIMIT: [int(0), "a non-negative integer"],
  SEGMENT_GROUP_LIMIT: [int(1), "a positive integer"],
  INNGEST_EVENT_KEY: [z.string(), "a string"],
  INNGEST_SIGNING_KEY: [z.string(), "a string"],
  INNGEST_DEV: [z.string(), "1 or the dev server's URL"],
  DISPATCH_STEPS_PER_RUN: [int(1), "a positive integer"],
  DISPATCH_CONCURRENCY: [int(1, 256), "an integer from 1 to 256"],
  SEND_RETRY_SCHEDULE: [msList, "comma-separated milliseconds (non-negative integers)"],
  WEBHOOK_RETRY_SCHEDULE: [msList, "comma-separated milliseconds (non-negative integers)"],
  WEBHOOK_TIMEOUT_MS: [int(1), "a positive integer"],
  WEBHOOK_SECRET_GRACE_HOURS: [int(0), "a non-negative integer"],
  WEBHOOK_TENANT_CONCURRENCY: [int(1), "a positive integer"],
  WEBHOOK_RETENTION_DAYS: [int(1), "a positive integer"],
  WEBHOOK_ALLOW_PRIVATE: [flag, "1 (or 0, or unset)"],
  LAUNCH_INVITE_CHECK_SECONDS: [int(1), "a positive integer"],
  LAUNCH_MEMBERS_REPORT_SECONDS: [int(1), "a positive integer"],
  NUMBER_COOLING_BASE_MS: [int(1), "a positive integer"],
  RATE_LIMIT_SIGN_IN_PER_ACCOUNT: [int(1), "a positive integer"],
  RATE_LIMIT_SIGN_IN_PER_ADDRESS: [int(1), "a positive integer"],
  RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR: [int(1), "a positive integer"],
  PASSWORD_SCRYPT_N_FOR_TESTS: [int(2), "an integer of at least 2"],
  RATE_LIMIT_API_KEY_PER_MINUTE: [int(1), "a positive integer"],
  API_KEY_CACHE_SECONDS: [int(0), "a non-negative integer"],
  RATE_LIMIT_PARTNER_PER_MINUTE: [int(1), "a positive integer"],
  RATE_LIMIT_OAUTH_IP_PER_MINUTE: [int(1), "a positive integer"],
  RATE_LIMIT_FAILED_AUTH_PER_MINUTE: [int(1), "a positive integer"],
  TRUST_PROXY: [int(0), "a non-negative integer"],
} satisfies Record<string, [z.ZodType<unknown, string>, string]>;

export type EnvVariable = keyof typeof variables;
type Parsed<K extends EnvVariable> = z.output<(typeof variables)[K][0]>;

/** The last value parsed per variable: process.env is read live (tests change it), parsed again only when it changed. */
const parsed = new Map<EnvVariable, { raw: string; value: unknown }>();

function problem(name: EnvVariable, raw: string): string {
  return `${name} must be ${variables[name][1]} (got ${JSON.stringify(raw)})`;
}

/** The variable's parsed value, or undefined when unset or empty. Throws naming the variable when it is invalid. */
export function readEnv<K extends EnvVariable>(name: K): Parsed<K> | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const cached = parsed.get(name);
  if (cached?.raw === raw) return cached.value as Parsed<K>;
  const result = variables[name][0].safeParse(raw);
  if (!result.success) throw new Error(`Invalid environment: ${problem(name, raw)}`);
  parsed.set(name, { raw, value: result.data });
  return result.data as Parsed<K>;
}

/**
 * Checks every variable at once; the server calls it at start (instrumentation.ts, scripts/serve.ts) so a
 * typo stops it there, naming every bad variable, instead of at the first request that reads one.
 */
export function validateEnv(source: Record<string, string | undefined> = process.env): void {
  const problems: string[] = [];
  for (const name of Object.keys(variables) as EnvVariable[]) {
    const raw = source[name];
    if (raw === undefined || raw === "") continue;
    if (!variables[name][0].safeParse(raw).success) problems.push(problem(name, raw));
  }
  if (problems.length > 0) throw new Error(`Invalid environment: ${problems.join("; ")}`);
}

const trimSlash = (u: string) => u.replace(/\/$/, "");

/**
 * The service's configuration, read through `readEnv`: each accessor reads its variable when called (tests
 * set process.env between tests), with the documented default when unset.
 */
export const env = {
  get port() {
    return readEnv("PORT") ?? 3000;
  },
  get appUrl() {
    return trimSlash(readEnv("APP_URL") ?? `http://localhost:${this.port}`);
  },
  get dataDir() {
    return path.resolve(/*turbopackIgnore: true*/ readEnv("DATA_DIR") ?? ".data");
  },
  get databaseUrl() {
    return readEnv("DATABASE_URL");
  },
  /** PostgreSQL connections the process keeps at most. */
  get databasePoolSize() {
    return readEnv("DATABASE_POOL_SIZE") ?? 10;
  },
  /** Benches only: a file the statements run are counted into, by text (db/client.ts). */
  get statementLog() {
    return readEnv("DB_STATEMENT_LOG");
  },
  get messagingProvider(): "simulator" | "evolution" {
    return readEnv("MESSAGING_PROVIDER") ?? "simulator";
  },
  get simulatorPairingMs() {
    return readEnv("SIMULATOR_PAIRING_MS") ?? 0;
  },
  get simulatorGroupsPerChannel() {
    return readEnv("SIMULATOR_GROUPS_PER_CHANNEL") ?? 20;
  },
  /** Days the simulator's message log is kept (the hourly maintenance job deletes older messages). */
  get simulatorRetentionDays() {
    return readEnv("SIMULATOR_RETENTION_DAYS") ?? 7;
  },
  /** Evolution API v2 (MESSAGING_PROVIDER=evolution): the gateway's address, global API key, and how we call it. */
  evolution: {
    get apiUrl() {
      return trimSlash(readEnv("EVOLUTION_API_URL") ?? "http://localhost:8080");
    },
    get apiKey() {
      return readEnv("EVOLUTION_API_KEY") ?? "";
    },
    /** Where the gateway posts its webhooks (our /api/evolution/webhook/…); defaults to APP_URL. */
    get webhookBaseUrl() {
      return trimSlash(readEnv("EVOLUTION_WEBHOOK_BASE_URL") ?? env.appUrl);
    },
    get timeoutMs() {
      return readEnv("EVOLUTION_TIMEOUT_MS") ?? 20_000;
    },
    get retries() {
      return readEnv("EVOLUTION_RETRIES") ?? 2;
    },
    get groupsTtlSeconds() {
      return readEnv("EVOLUTION_GROUPS_TTL_SECONDS") ?? 600;
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
     * only after two negative look-ups this far apart (docs/decisions.md#evolution-api). Default 300.
     */
    get reconcileAfterSeconds() {
      const n = Number(process.env.EVOLUTION_RECONCILE_AFTER_SECONDS ?? 300);
      return Number.isFinite(n) && n >= 0 ? n : 300;
    },
  },
  /**
   * Proxy hops in front of the server whose X-Forwarded-For/-Host/-Proto are believed (docs/decisions.md#limits-abuse-retention
   * "Client address"). 0 (default): the client is the TCP peer and those headers are ignored.
   */
  get trustProxy() {
    return readEnv("TRUST_PROXY") ?? 0;
  },
  get defaultChannelLimit() {
    return readEnv("DEFAULT_CHANNEL_LIMIT") ?? 10;
  },
  /** How long a key that authenticated skips the lookup (0 disables the cache). */
  get apiKeyCacheSeconds() {
    return readEnv("API_KEY_CACHE_SECONDS") ?? 5;
  },
  get segmentGroupLimit() {
    return readEnv("SEGMENT_GROUP_LIMIT") ?? 50_000;
  },
  /** Inngest only: steps one function run takes before continuing in a new run. */
  get dispatchStepsPerRun() {
    return readEnv("DISPATCH_STEPS_PER_RUN") ?? 400;
  },
  /** In-process runner only: campaign steps run at once. */
  get dispatchConcurrency() {
    return readEnv("DISPATCH_CONCURRENCY") ?? 48;
  },
  rateLimit: {
    get apiKeyPerMinute() {
      return readEnv("RATE_LIMIT_API_KEY_PER_MINUTE") ?? 300;
    },
    get partnerPerMinute() {
      return readEnv("RATE_LIMIT_PARTNER_PER_MINUTE") ?? 120;
    },
    get oauthIpPerMinute() {
      return readEnv("RATE_LIMIT_OAUTH_IP_PER_MINUTE") ?? 30;
    },
    get failedAuthPerMinute() {
      return readEnv("RATE_LIMIT_FAILED_AUTH_PER_MINUTE") ?? 20;
    },
    /** Dashboard sign-in: failed attempts per account (email) in 15 minutes, then every attempt is refused unhashed. */
    get signInFailuresPerAccount() {
      return readEnv("RATE_LIMIT_SIGN_IN_PER_ACCOUNT") ?? 10;
    },
    /** Dashboard sign-in: failed attempts per client address in 15 minutes. */
    get signInFailuresPerAddress() {
      return readEnv("RATE_LIMIT_SIGN_IN_PER_ADDRESS") ?? 50;
    },
    /** Dashboard sign-up: accounts created per client address in an hour. */
    get signUpsPerAddressPerHour() {
      return readEnv("RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR") ?? 10;
    },
  },
  webhooks: {
    /** Delays (ms) before each retry of a failed delivery; after the last one the delivery is given up. */
    get retrySchedule(): number[] {
      return readEnv("WEBHOOK_RETRY_SCHEDULE") ?? [5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];
    },
    get timeoutMs() {
      return readEnv("WEBHOOK_TIMEOUT_MS") ?? 10_000;
    },
    /** Days finished deliveries (with their attempts) and fanned-out outbox events are kept. */
    get retentionDays() {
      return readEnv("WEBHOOK_RETENTION_DAYS") ?? 30;
    },
    /** Hours the previous signing secret keeps signing beside the new one after a rotation. */
    get secretGraceHours() {
      return readEnv("WEBHOOK_SECRET_GRACE_HOURS") ?? 24;
    },
    /** Deliveries of one tenant in flight at once (distinct campaigns/channels; one at a time per campaign). */
    get tenantConcurrency() {
      return readEnv("WEBHOOK_TENANT_CONCURRENCY") ?? 16;
    },
    /**
     * WEBHOOK_ALLOW_PRIVATE=1 lets webhook URLs (and media URLs) reach private, loopback and link-local
     * addresses, in every mode, production included: self-hosters deliver to receivers on their own
     * network. The server logs a warning at start when it is on (startupWarnings).
     */
    get allowPrivate(): boolean {
      return readEnv("WEBHOOK_ALLOW_PRIVATE") === "1";
    },
  },
  /** Launches' members and invite links (docs/decisions.md#launches, "Members"). */
  launchFunnel: {
    /** How often each launch group's invite link and state are checked (hourly). */
    get inviteCheckSeconds() {
      return readEnv("LAUNCH_INVITE_CHECK_SECONDS") ?? 3600;
    },
    /** The least time between two `members_changed` webhooks of one group (a minute). */
    get membersReportSeconds() {
      return readEnv("LAUNCH_MEMBERS_REPORT_SECONDS") ?? 60;
    },
  },
  /** A number's cool-down after a rate-limit answer (CONTRACT §7): the base, doubling per signal within 60 bases (tests shorten it). */
  get numberCoolingBaseMs() {
    return readEnv("NUMBER_COOLING_BASE_MS") ?? 60_000;
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
export const inngestConfigured = () => Boolean(process.env.INNGEST_EVENT_KEY || process.env.INNGEST_SIGNING_KEY || process.env.INNGEST_DEV);

/** Settings an operator should know are on, logged once when the server starts (instrumentation.ts). */
export function startupWarnings(): string[] {
  const warnings: string[] = [];
  if (env.webhooks.allowPrivate) {
    warnings.push(
      "WEBHOOK_ALLOW_PRIVATE=1: webhook and media URLs may point to private, loopback and link-local addresses. " +
        "Set it only when receivers live on your own network.",
    );
  }
  return warnings;
}
