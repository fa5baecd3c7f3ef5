import { sql } from "drizzle-orm";
import { RateLimiterDrizzle, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { isEmbedded, type Db } from "../../db/client";
import { preparedPerDb } from "../../db/params";
import { rateLimitBuckets } from "../../db/schema";
import { env } from "../env";
import { processSlot } from "../process-state";
import { addressKey } from "./client-address";

export type LimitName = "apiKey" | "partner" | "oauthIp" | "failedAuth" | "signInAccount" | "signInAddress" | "signUpAddress" | "sendTest";

/**
 * The limits counted per client address (docs/security.md, "Per-address keys"). Their callers pass the
 * client address as it is; the bucket is keyed by addressKey (an IPv6 client by its /64), here, so no
 * caller can forget it.
 */
const perAddress: ReadonlySet<LimitName> = new Set(["oauthIp", "failedAuth", "signInAddress", "signUpAddress"]);

const keyOf = (name: LimitName, key: string) => (perAddress.has(name) ? addressKey(key) : key);

export interface LimitOutcome {
  allowed: boolean;
  /** Points left in the window after this one (0 once the limit is reached). */
  remaining: number;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

/** Points per fixed window, and the window's length in seconds. */
const windows: Record<LimitName, () => { points: number; duration: number }> = {
  apiKey: () => ({ points: env.rateLimit.apiKeyPerMinute, duration: 60 }),
  partner: () => ({ points: env.rateLimit.partnerPerMinute, duration: 60 }),
  oauthIp: () => ({ points: env.rateLimit.oauthIpPerMinute, duration: 60 }),
  failedAuth: () => ({ points: env.rateLimit.failedAuthPerMinute, duration: 60 }),
  // Dashboard sign-in (docs/decisions.md#limits-abuse-retention): failed attempts per account (email) and per client address.
  signInAccount: () => ({ points: env.rateLimit.signInFailuresPerAccount, duration: 15 * 60 }),
  signInAddress: () => ({ points: env.rateLimit.signInFailuresPerAddress, duration: 15 * 60 }),
  signUpAddress: () => ({ points: env.rateLimit.signUpsPerAddressPerHour, duration: 60 * 60 }),
  // Test sends per tenant (docs/decisions.md#test-send).
  sendTest: () => ({ points: 10, duration: 10 * 60 }),
};

/**
 * rate-limiter-flexible's upsert, prepared once: the stock one builds the statement with drizzle on
 * every request. Same semantics: a bucket whose window has expired restarts at `points`.
 */
const consumeStatement = preparedPerDb((db: Db) => {
  const expired = sql`${rateLimitBuckets.expire} <= ${sql.placeholder("now")}::timestamptz`;
  return db
    .insert(rateLimitBuckets)
    .values({ key: sql.placeholder("key"), points: sql.placeholder("points"), expire: sql.placeholder("expire") })
    .onConflictDoUpdate({
      target: rateLimitBuckets.key,
      set: {
        points: sql`case when ${expired} then excluded.points else ${rateLimitBuckets.points} + excluded.points end`,
        expire: sql`case when ${expired} then excluded.expire else ${rateLimitBuckets.expire} end`,
      },
    })
    .returning()
    .prepare("rate_limit_consume");
});

type Upsert = (key: string, points: number, msDuration: number, forceExpire?: boolean) => Promise<unknown>;
const stockUpsert = (RateLimiterDrizzle.prototype as unknown as { _upsert: Upsert })._upsert;

/** Overrides the store's (untyped) `_upsert` hook; `set`/`block` (forceExpire) keep the stock one. */
class PreparedDrizzleLimiter extends RateLimiterDrizzle {
  constructor(
    private readonly db: Db,
    opts: ConstructorParameters<typeof RateLimiterDrizzle>[0],
  ) {
    super(opts);
  }

  async _upsert(key: string, points: number, msDuration: number, forceExpire = false) {
    if (forceExpire) return stockUpsert.call(this, key, points, msDuration, forceExpire);
    const now = new Date();
    const expire = msDuration > 0 ? new Date(now.getTime() + msDuration) : null;
    const [row] = await consumeStatement(this.db).execute({ key, points, expire, now: now.toISOString() });
    return row;
  }
}

type Limiter = RateLimiterDrizzle | RateLimiterMemory;

const limiters = processSlot<{ db: Db; limiters: Map<LimitName, Limiter> }>("rateLimiters");

/**
 * Fixed windows (one minute for requests, longer for sign-in and sign-up) kept in PostgreSQL, so every process shares them. On embedded PGlite one
 * process owns the database, so that process's memory is the shared place, and a request saves an
 * embedded write (a restart starts every window afresh).
 */
function limiter(db: Db, name: LimitName): Limiter {
  let current = limiters.get();
  if (current?.db !== db) {
    current = { db, limiters: new Map() };
    limiters.set(current);
  }
  const cache = current.limiters;
  let l = cache.get(name);
  if (!l) {
    const window = { keyPrefix: name, ...windows[name]() };
    l = isEmbedded(db)
      ? new RateLimiterMemory(window)
      : new PreparedDrizzleLimiter(db, { ...window, storeClient: db, schema: rateLimitBuckets, clearExpiredByTimeout: false });
    cache.set(name, l);
  }
  return l;
}

/** Whether the buckets live in the database (so a query can read one alongside other rows). */
export const bucketsInDatabase = (db: Db) => !isEmbedded(db);

function headersFor(points: number, res: RateLimiterRes) {
  const reset = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return {
    "ratelimit-limit": String(points),
    "ratelimit-remaining": String(Math.max(0, res.remainingPoints)),
    "ratelimit-reset": String(reset),
  };
}

/** Takes one point from `key`'s bucket; `allowed` false once the minute's points are spent. */
export async function consume(db: Db, name: LimitName, key: string): Promise<LimitOutcome> {
  const l = limiter(db, name);
  try {
    const res = await l.consume(keyOf(name, key));
    return { allowed: true, remaining: Math.max(0, res.remainingPoints), headers: headersFor(l.points, res), retryAfterSeconds: 0 };
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    const retryAfterSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    return { allowed: false, remaining: 0, headers: { ...headersFor(l.points, res), "retry-after": String(retryAfterSeconds) }, retryAfterSeconds };
  }
}

/** Gives `points` back to `key`'s bucket (a reserved attempt that turned out fine). */
export async function reward(db: Db, name: LimitName, key: string, points = 1): Promise<void> {
  await limiter(db, name).reward(keyOf(name, key), points);
}

/** Empties `key`'s bucket (an account's failures after its owner signed in). */
export async function reset(db: Db, name: LimitName, key: string): Promise<void> {
  await limiter(db, name).delete(keyOf(name, key));
}

/** Reads a bucket without taking a point (failed-auth blocking is checked before the attempt). */
export async function peek(db: Db, name: LimitName, key: string): Promise<LimitOutcome> {
  const res = await limiter(db, name).get(keyOf(name, key));
  return blockedBy(db, name, res ? { points: res.consumedPoints, msBeforeNext: res.msBeforeNext } : null);
}

/** The stored key of `key`'s bucket, for reading it inside another query (see lookupApiKey). */
export function bucketKey(db: Db, name: LimitName, key: string): string {
  return limiter(db, name).getKey(keyOf(name, key));
}

/** Whether a bucket read elsewhere (points and expiry) blocks the next attempt. */
export function outcomeOfBucket(db: Db, name: LimitName, row: { points: number; expire: Date | null } | null, now: Date): LimitOutcome {
  return blockedBy(db, name, row ? { points: row.points, msBeforeNext: row.expire ? Math.max(0, row.expire.getTime() - now.getTime()) : -1 } : null);
}

function blockedBy(db: Db, name: LimitName, used: { points: number; msBeforeNext: number } | null): LimitOutcome {
  const l = limiter(db, name);
  if (!used || used.points < l.points) return { allowed: true, remaining: l.points - (used?.points ?? 0), headers: {}, retryAfterSeconds: 0 };
  const res = new RateLimiterRes(0, used.msBeforeNext, used.points);
  const retryAfterSeconds = Math.max(1, Math.ceil(used.msBeforeNext / 1000));
  return { allowed: false, remaining: 0, headers: { ...headersFor(l.points, res), "retry-after": String(retryAfterSeconds) }, retryAfterSeconds };
}
