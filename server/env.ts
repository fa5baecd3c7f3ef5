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
 * Every environment variable the service reads, once: its schema, what it must be (for the error
 * message), its default (`shown`: how docs/operations.md shows a default that is not a plain value) and
 * its line in docs/operations.md's configuration table (test/docs/env-table.test.ts holds the two
 * equal). An empty value counts as unset. Nothing else in app/, server/, db/ or inngest/ reads
 * process.env (biome's noProcessEnv).
 */
interface Variable {
  schema: z.ZodType<unknown, string>;
  must: string;
  default?: unknown;
  shown?: string;
  doc: string;
}

const variables = {
  PORT: { schema: int(1, 65535), must: "an integer from 1 to 65535", default: 3000, doc: "HTTP port. Alone it is enough to run on another port." },
  APP_URL: {
    schema: url,
    must: "an http(s) URL",
    shown: "`http://localhost:$PORT`",
    doc: "Public address: links, the OpenAPI `servers` entry, next-auth's URL, the OAuth issuer.",
  },
  DATA_DIR: {
    schema: z.string(),
    must: "a path",
    default: ".data",
    shown: "`./.data`",
    doc: "Embedded database (`pglite/`), its lock file, and generated secrets.",
  },
  DATABASE_URL: {
    schema: z.string().regex(/^postgres(ql)?:\/\//),
    must: "a postgres:// URL",
    doc: "PostgreSQL URL (`postgres://user@host:5432/db`). Set: PostgreSQL through the `postgres` driver; unset: embedded PGlite under `DATA_DIR`. Same schema and migrations either way; migrations run at start.",
  },
  DATABASE_POOL_SIZE: {
    schema: int(1, 500),
    must: "an integer from 1 to 500",
    default: 10,
    doc: "PostgreSQL only: connections this process keeps open at most (each server process has its own pool).",
  },
  DB_STATEMENT_LOG: {
    schema: z.string(),
    must: "a file path",
    doc: "Benches only (`BENCH_STATEMENTS=1` sets it): a file the server counts the statements it runs into, by text, once a second. Costs a map update per statement; leave it unset in production.",
  },
  NEXTAUTH_SECRET: {
    schema: z.string(),
    must: "a string",
    shown: "generated into `DATA_DIR/nextauth-secret`",
    doc: "Signs dashboard sessions. Set it when several servers share one database.",
  },
  NEXTAUTH_URL: { schema: url, must: "an http(s) URL", shown: "`APP_URL`", doc: "next-auth's own variable; follows `APP_URL` unless set." },
  MESSAGING_PROVIDER: {
    schema: z.enum(["simulator", "evolution"]),
    must: "simulator or evolution",
    default: "simulator" as const,
    doc: "`simulator` (built in) or `evolution` (a self-hosted Evolution API v2, see [Evolution API](evolution.md)).",
  },
  EVOLUTION_API_URL: { schema: url, must: "an http(s) URL", default: "http://localhost:8080", doc: "Evolution only: the gateway's address." },
  EVOLUTION_API_KEY: {
    schema: z.string(),
    must: "a string",
    default: "",
    shown: "—",
    doc: "Evolution only: the gateway's global key (its `AUTHENTICATION_API_KEY`), sent as the `apikey` header.",
  },
  EVOLUTION_WEBHOOK_BASE_URL: {
    schema: url,
    must: "an http(s) URL",
    shown: "`APP_URL`",
    doc: "Evolution only: the address the gateway reaches us at; it posts to `<base>/api/evolution/webhook/<channel>` with the instance's secret in the `x-webhook-token` header (instances created before: `<base>/api/evolution/webhook/<channel>/<secret>`, still accepted).",
  },
  EVOLUTION_TIMEOUT_MS: {
    schema: int(1),
    must: "a positive integer",
    default: 20_000,
    doc: "Evolution only: time-out of every call but the group listing. A send that times out is an unknown outcome, not a failure.",
  },
  EVOLUTION_GROUPS_TIMEOUT_MS: {
    schema: int(1),
    must: "a positive integer",
    default: 300_000,
    doc: "Evolution only: time-out of one group listing (the gateway fetches one picture per group: minutes on large accounts). Never retried; see [Evolution API](evolution.md#how-we-talk-to-the-gateway).",
  },
  EVOLUTION_STATE_POLL_SECONDS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 60,
    doc: "Evolution only: how often the embedded runner asks the gateway for the state of its instances (each instance's `connectionState`, the gateway's in-memory state; its stored row only for a change: a missed webhook is recovered, a ban or logout whose webhooks were lost is found, a silent reconnect is seen); `0` turns it off. With Inngest the `channel-state-poll` cron function runs every minute instead.",
  },
  EVOLUTION_RECONNECT_GRACE_SECONDS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 30,
    doc: "Evolution only: how long a paired number may be reconnecting (the gateway says `connecting`, or its sends answer `Connection Closed`) and still count as able to send; past it the channel is `disconnected` (its deliveries fail over) until the gateway says `open` again. Sends wait meanwhile without losing an attempt. See [Evolution API](evolution.md#a-number-that-is-reconnecting).",
  },
  EVOLUTION_RECONCILE_AFTER_SECONDS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 300,
    doc: "Evolution only: a send whose answer was lost is looked up this long after the attempt, and resent only after two negative look-ups this far apart.",
  },
  EVOLUTION_RETRIES: {
    schema: int(0),
    must: "a non-negative integer",
    default: 2,
    doc: "Evolution only: extra attempts for calls safe to repeat (reads, webhook set), with backoff; `Retry-After` honoured.",
  },
  EVOLUTION_GROUPS_TTL_SECONDS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 600,
    doc: "Evolution only: how long a channel's group list is fresh; an older list is served at once while one background listing refreshes it.",
  },
  ENCRYPTION_KEY: {
    schema: z.string(),
    must: "a string",
    shown: "generated into `DATA_DIR/encryption-key`",
    doc: "Encrypts integration credentials (and webhook secrets) at rest, AES-256-GCM. Set it when several servers share a database.",
  },
  ENCRYPTION_KEY_PREVIOUS: {
    schema: z.string(),
    must: "comma-separated keys",
    doc: "Old keys (comma separated) still accepted for reading during a rotation, see [Integrations](integrations.md#encryption-at-rest-and-key-rotation).",
  },
  SIMULATOR_PAIRING_MS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 0,
    doc: "How long a new simulated channel stays `connecting` before it pairs.",
  },
  SIMULATOR_RATE_WINDOW_MS: {
    schema: int(1),
    must: "a positive integer",
    default: 60_000,
    doc: "The rolling window of a simulated channel's `rate_limit_per_minute`: a minute. Tests shorten it, with `NUMBER_COOLING_BASE_MS`.",
  },
  SIMULATOR_GROUPS_PER_CHANNEL: { schema: int(1), must: "a positive integer", default: 20, doc: "Groups each simulated channel has." },
  SIMULATOR_RETENTION_DAYS: {
    schema: int(1),
    must: "a positive integer",
    default: 7,
    doc: "Days the simulator's message log (`/api/simulator/messages`) is kept; the hourly [maintenance job](security.md#retention) deletes older messages.",
  },
  DEFAULT_CHANNEL_LIMIT: {
    schema: int(0),
    must: "a non-negative integer",
    default: 10,
    doc: "Channel limit of new tenants (change one tenant's with `set-channel-limit`).",
  },
  SEGMENT_GROUP_LIMIT: {
    schema: int(1),
    must: "a positive integer",
    default: 50_000,
    doc: "Most groups one segment may hold. A longer `groups` list is refused while the body is parsed: 400 naming `groups`. Read at start.",
  },
  INNGEST_EVENT_KEY: {
    schema: z.string(),
    must: "a string",
    doc: "Inngest Cloud's event key. Set (or `INNGEST_SIGNING_KEY` or `INNGEST_DEV`): Inngest runs dispatch; unset: the in-process runner does. See [Engines](#dispatch-engines-inngest-or-embedded).",
  },
  INNGEST_SIGNING_KEY: {
    schema: z.string(),
    must: "a string",
    doc: "Inngest Cloud's signing key; set, like `INNGEST_EVENT_KEY`, Inngest runs dispatch. See [Engines](#dispatch-engines-inngest-or-embedded).",
  },
  INNGEST_DEV: { schema: z.string(), must: "1 or the dev server's URL", doc: "`1` (or the dev server's URL): use a local Inngest dev server." },
  DISPATCH_STEPS_PER_RUN: {
    schema: int(1),
    must: "a positive integer",
    default: 400,
    doc: "Inngest only: steps one function run takes before continuing in a new run.",
  },
  DISPATCH_CONCURRENCY: {
    schema: int(1, 256),
    must: "an integer from 1 to 256",
    default: 48,
    doc: "Embedded runner only: campaign steps run at once (one campaign is never on two workers; one tenant holds at most a quarter). A step mostly waits for the database and the gateway, so the pool is wider than the CPUs: 200 campaigns paced at 1–2 s need about 133 steps a second, and 200 due at once wait for the pool ([benchmarks](benchmarks.md#scale-and-fairness)).",
  },
  SEND_RETRY_SCHEDULE: {
    schema: msList,
    must: "comma-separated milliseconds (non-negative integers)",
    default: [2000, 10_000],
    doc: "Delays in milliseconds before each retry of a failed send; after the last, the group is `failed`.",
  },
  WEBHOOK_RETRY_SCHEDULE: {
    schema: msList,
    must: "comma-separated milliseconds (non-negative integers)",
    default: [5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000],
    doc: "Delays in milliseconds before each retry of a failed webhook delivery (±20 % jitter); after the last, the delivery is given up.",
  },
  WEBHOOK_TIMEOUT_MS: { schema: int(1), must: "a positive integer", default: 10_000, doc: "Time-out of one delivery attempt." },
  WEBHOOK_SECRET_GRACE_HOURS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 24,
    doc: "After a secret rotation, how long the previous secret keeps signing beside the new one.",
  },
  WEBHOOK_TENANT_CONCURRENCY: {
    schema: int(1),
    must: "a positive integer",
    default: 16,
    doc: "Webhook deliveries of one tenant in flight at once (embedded runner), for its own URLs and, separately, for its partner apps' copies.",
  },
  WEBHOOK_RETENTION_DAYS: {
    schema: int(1),
    must: "a positive integer",
    default: 30,
    doc: "Days the delivery log (finished deliveries, their attempts, processed outbox events) is kept; the hourly [maintenance job](security.md#retention) deletes older entries.",
  },
  WEBHOOK_ALLOW_PRIVATE: {
    schema: flag,
    must: "1 (or 0, or unset)",
    doc: "`1`: webhook URLs, and `media_url` / `image_url`, may point to private, loopback, link-local and reserved addresses and internal host names. Honoured in every mode, production included (a receiver on your own network, e.g. an automation tool in the same container network); the server logs a warning at start while it is on.",
  },
  META_GRAPH_URL: {
    schema: url,
    must: "an http(s) URL",
    default: "https://graph.facebook.com/v25.0",
    doc: "Meta's Graph API with its version: launches with `tracking.meta` POST each click's server event to `<url>/<pixel_id>/events` ([launches.md](launches.md#metas-conversions-api)). Tests point it at a local receiver.",
  },
  LAUNCH_INVITE_CHECK_SECONDS: {
    schema: int(1),
    must: "a positive integer",
    default: 3600,
    doc: "How often each launch group's invite link is checked: a revoked link is replaced by the group's current one; a group that vanished or where the number lost admin becomes `broken` ([decisions.md](decisions.md#members)).",
  },
  GROUP_ACTION_GAP_MS: {
    schema: int(1),
    must: "a positive integer",
    default: 2000,
    doc: "The least time between two group actions of one number (2 s; a longer `min_send_gap_seconds` wins), see [groups.md](groups.md#how-it-runs). Tests and the bench shorten it.",
  },
  NUMBER_COOLING_BASE_MS: {
    schema: int(1),
    must: "a positive integer",
    default: 60_000,
    doc: "A number's first cool-down after the platform answered rate-limited; it doubles on each new signal within 60 of them, up to 60 times the base ([numbers.md](numbers.md#health-states)). Tests shorten it.",
  },
  LAUNCH_MEMBERS_REPORT_SECONDS: {
    schema: int(1),
    must: "a positive integer",
    default: 60,
    doc: "The least time between two `members_changed` webhooks of one launch group ([webhooks.md](webhooks.md#payloads)).",
  },
  RATE_LIMIT_SIGN_IN_PER_ACCOUNT: {
    schema: int(1),
    must: "a positive integer",
    default: 10,
    doc: "Failed dashboard sign-ins per account (e-mail) in 15 minutes; beyond, every attempt for that account is refused without checking the password.",
  },
  RATE_LIMIT_SIGN_IN_PER_ADDRESS: {
    schema: int(1),
    must: "a positive integer",
    default: 50,
    doc: "Failed dashboard sign-ins per client address in 15 minutes; beyond, every sign-in from the address is refused without checking the password.",
  },
  RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR: {
    schema: int(1),
    must: "a positive integer",
    default: 10,
    doc: "Dashboard sign-ups per client address per hour (429 beyond).",
  },
  PASSWORD_SCRYPT_N_FOR_TESTS: {
    schema: int(2),
    must: "an integer of at least 2",
    doc: "Tests only: read only when `NODE_ENV=test` (vitest), where `test/setup.ts` sets it to `1024` so the many throwaway accounts hash cheaply. Ignored in every other mode: a deployment always hashes with N=2^17.",
  },
  RATE_LIMIT_API_KEY_PER_MINUTE: { schema: int(1), must: "a positive integer", default: 300, doc: "Requests per API key per minute." },
  API_KEY_CACHE_SECONDS: {
    schema: int(0),
    must: "a non-negative integer",
    default: 5,
    doc: "How long a key that authenticated skips the database lookup (`0`: never). A key revoked in the dashboard is refused on its next request; a revocation made by another process (a second server on the same PostgreSQL) takes effect within this time.",
  },
  RATE_LIMIT_PARTNER_PER_MINUTE: { schema: int(1), must: "a positive integer", default: 120, doc: "Requests per partner grant per minute." },
  RATE_LIMIT_OAUTH_IP_PER_MINUTE: { schema: int(1), must: "a positive integer", default: 30, doc: "Requests per client IP per minute on the OAuth endpoints." },
  RATE_LIMIT_FAILED_AUTH_PER_MINUTE: {
    schema: int(1),
    must: "a positive integer",
    default: 20,
    doc: "Failed authentications per client IP per minute before the address gets 429.",
  },
  TRUST_PROXY: {
    schema: int(0),
    must: "a non-negative integer",
    default: 0,
    doc: "Reverse proxies in front of the server whose `X-Forwarded-For`/`-Host`/`-Proto` are believed. `0`: the client is the TCP peer and those headers are ignored. `N`: the client is the N-th address from the right of `X-Forwarded-For`. Set it to the number of proxies you run (usually `1`), never higher: see [client address](security.md#client-address-and-proxies-trust_proxy).",
  },
} satisfies Record<string, Variable>;

export type EnvVariable = keyof typeof variables;
type Parsed<K extends EnvVariable> = z.output<(typeof variables)[K]["schema"]>;
type Defaulted = { [K in EnvVariable]: (typeof variables)[K] extends { default: unknown } ? K : never }[EnvVariable];

/** The last value parsed per variable: process.env is read live (tests change it), parsed again only when it changed. */
const parsed = new Map<EnvVariable, { raw: string; value: unknown }>();

function problem(name: EnvVariable, raw: string): string {
  return `${name} must be ${variables[name].must} (got ${JSON.stringify(raw)})`;
}

/** The variable's parsed value, or undefined when unset or empty. Throws naming the variable when it is invalid. */
export function readEnv<K extends EnvVariable>(name: K): Parsed<K> | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const cached = parsed.get(name);
  if (cached?.raw === raw) return cached.value as Parsed<K>;
  const result = variables[name].schema.safeParse(raw);
  if (!result.success) throw new Error(`Invalid environment: ${problem(name, raw)}`);
  parsed.set(name, { raw, value: result.data });
  return result.data as Parsed<K>;
}

/** The variable's parsed value, or its default when unset or empty. */
export function setting<K extends Defaulted>(name: K): Parsed<K> {
  return readEnv(name) ?? (variables[name].default as Parsed<K>);
}

/** docs/operations.md's configuration table, one row per variable, as this file states them. */
export function envTableRows(): string[] {
  return Object.entries(variables).map(([name, v]: [string, Variable]) => {
    const shown = v.shown ?? (v.default === undefined ? "—" : `\`${Array.isArray(v.default) ? v.default.join(",") : String(v.default)}\``);
    return `| \`${name}\` | ${shown} | ${v.doc} |`;
  });
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
    if (!variables[name].schema.safeParse(raw).success) problems.push(problem(name, raw));
  }
  if (problems.length > 0) throw new Error(`Invalid environment: ${problems.join("; ")}`);
}

const trimSlash = (u: string) => u.replace(/\/$/, "");

/**
 * The service's configuration by name: each accessor reads its variable when called (tests set process.env
 * between tests), with its default when unset; what each means is its variable's doc line above.
 */
export const env = {
  get port() {
    return setting("PORT");
  },
  get appUrl() {
    return trimSlash(readEnv("APP_URL") ?? `http://localhost:${this.port}`);
  },
  get dataDir() {
    return path.resolve(/*turbopackIgnore: true*/ setting("DATA_DIR"));
  },
  get databaseUrl() {
    return readEnv("DATABASE_URL");
  },
  get databasePoolSize() {
    return setting("DATABASE_POOL_SIZE");
  },
  get statementLog() {
    return readEnv("DB_STATEMENT_LOG");
  },
  get messagingProvider(): "simulator" | "evolution" {
    return setting("MESSAGING_PROVIDER");
  },
  get simulatorPairingMs() {
    return setting("SIMULATOR_PAIRING_MS");
  },
  get simulatorRateWindowMs() {
    return setting("SIMULATOR_RATE_WINDOW_MS");
  },
  get simulatorGroupsPerChannel() {
    return setting("SIMULATOR_GROUPS_PER_CHANNEL");
  },
  get simulatorRetentionDays() {
    return setting("SIMULATOR_RETENTION_DAYS");
  },
  /** Evolution API v2 (MESSAGING_PROVIDER=evolution): the gateway's address, global API key, and how we call it. */
  evolution: {
    get apiUrl() {
      return trimSlash(setting("EVOLUTION_API_URL"));
    },
    get apiKey() {
      return setting("EVOLUTION_API_KEY");
    },
    get webhookBaseUrl() {
      return trimSlash(readEnv("EVOLUTION_WEBHOOK_BASE_URL") ?? env.appUrl);
    },
    get timeoutMs() {
      return setting("EVOLUTION_TIMEOUT_MS");
    },
    get retries() {
      return setting("EVOLUTION_RETRIES");
    },
    get groupsTtlSeconds() {
      return setting("EVOLUTION_GROUPS_TTL_SECONDS");
    },
    get groupsTimeoutMs() {
      return setting("EVOLUTION_GROUPS_TIMEOUT_MS");
    },
    get statePollSeconds() {
      return setting("EVOLUTION_STATE_POLL_SECONDS");
    },
    get reconcileAfterSeconds() {
      return setting("EVOLUTION_RECONCILE_AFTER_SECONDS");
    },
    get reconnectGraceSeconds() {
      return setting("EVOLUTION_RECONNECT_GRACE_SECONDS");
    },
  },
  get trustProxy() {
    return setting("TRUST_PROXY");
  },
  get defaultChannelLimit() {
    return setting("DEFAULT_CHANNEL_LIMIT");
  },
  get apiKeyCacheSeconds() {
    return setting("API_KEY_CACHE_SECONDS");
  },
  get segmentGroupLimit() {
    return setting("SEGMENT_GROUP_LIMIT");
  },
  get dispatchStepsPerRun() {
    return setting("DISPATCH_STEPS_PER_RUN");
  },
  get dispatchConcurrency() {
    return setting("DISPATCH_CONCURRENCY");
  },
  rateLimit: {
    get apiKeyPerMinute() {
      return setting("RATE_LIMIT_API_KEY_PER_MINUTE");
    },
    get partnerPerMinute() {
      return setting("RATE_LIMIT_PARTNER_PER_MINUTE");
    },
    get oauthIpPerMinute() {
      return setting("RATE_LIMIT_OAUTH_IP_PER_MINUTE");
    },
    get failedAuthPerMinute() {
      return setting("RATE_LIMIT_FAILED_AUTH_PER_MINUTE");
    },
    get signInFailuresPerAccount() {
      return setting("RATE_LIMIT_SIGN_IN_PER_ACCOUNT");
    },
    get signInFailuresPerAddress() {
      return setting("RATE_LIMIT_SIGN_IN_PER_ADDRESS");
    },
    get signUpsPerAddressPerHour() {
      return setting("RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR");
    },
  },
  webhooks: {
    get retrySchedule(): number[] {
      return setting("WEBHOOK_RETRY_SCHEDULE");
    },
    get timeoutMs() {
      return setting("WEBHOOK_TIMEOUT_MS");
    },
    get retentionDays() {
      return setting("WEBHOOK_RETENTION_DAYS");
    },
    get secretGraceHours() {
      return setting("WEBHOOK_SECRET_GRACE_HOURS");
    },
    get tenantConcurrency() {
      return setting("WEBHOOK_TENANT_CONCURRENCY");
    },
    get allowPrivate(): boolean {
      return readEnv("WEBHOOK_ALLOW_PRIVATE") === "1";
    },
  },
  /** Launches' members and invite links (docs/decisions.md#launches, "Members"). */
  launchFunnel: {
    get inviteCheckSeconds() {
      return setting("LAUNCH_INVITE_CHECK_SECONDS");
    },
    get membersReportSeconds() {
      return setting("LAUNCH_MEMBERS_REPORT_SECONDS");
    },
  },
  /** Meta's Graph API, version included (docs/launches.md#metas-conversions-api). */
  get metaGraphUrl() {
    return trimSlash(setting("META_GRAPH_URL"));
  },
  get groupActionGapMs() {
    return setting("GROUP_ACTION_GAP_MS");
  },
  get numberCoolingBaseMs() {
    return setting("NUMBER_COOLING_BASE_MS");
  },
  get sendRetrySchedule(): number[] {
    return setting("SEND_RETRY_SCHEDULE");
  },
  get nextAuthUrl() {
    return readEnv("NEXTAUTH_URL") ?? env.appUrl;
  },
  get encryptionKeysPrevious(): string[] {
    return (readEnv("ENCRYPTION_KEY_PREVIOUS") ?? "")
      .split(",")
      .map((value) => value.trim())
      .filter(Boolean);
  },
  get passwordScryptNForTests() {
    return this.isTest ? readEnv("PASSWORD_SCRYPT_N_FOR_TESTS") : undefined;
  },
  get isProduction() {
    return process.env.NODE_ENV === "production";
  },
  get isTest() {
    return process.env.NODE_ENV === "test";
  },
};

/** next-auth reads its URL from the environment; APP_URL (or PORT) is enough for us. */
export function exportNextAuthUrl() {
  process.env.NEXTAUTH_URL ??= env.appUrl;
}

/** A secret from the environment, or one generated once and kept under DATA_DIR. */
const secrets = new Map<string, string>();

export function persistentSecret(envName: "NEXTAUTH_SECRET" | "ENCRYPTION_KEY", fileName: string, bytes = 32): string {
  const fromEnv = readEnv(envName);
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
export const inngestConfigured = () => Boolean(readEnv("INNGEST_EVENT_KEY") || readEnv("INNGEST_SIGNING_KEY") || readEnv("INNGEST_DEV"));

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
