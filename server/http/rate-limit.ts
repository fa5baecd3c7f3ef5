import { RateLimiterDrizzle, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "../../db/client";
import { rateLimitBuckets } from "../../db/schema";
import { env } from "../env";

export type LimitName = "apiKey" | "partner" | "oauthIp" | "failedAuth";

export interface LimitOutcome {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

const perMinute: Record<LimitName, () => number> = {
  apiKey: () => env.rateLimit.apiKeyPerMinute,
  partner: () => env.rateLimit.partnerPerMinute,
  oauthIp: () => env.rateLimit.oauthIpPerMinute,
  failedAuth: () => env.rateLimit.failedAuthPerMinute,
};

const holder = globalThis as unknown as { __gcsLimiters?: { db: Db; limiters: Map<LimitName, RateLimiterDrizzle> } };

/** Fixed one-minute windows kept in Postgres (or PGlite), so every process shares them. */
function limiter(db: Db, name: LimitName) {
  if (holder.__gcsLimiters?.db !== db) holder.__gcsLimiters = { db, limiters: new Map() };
  const cache = holder.__gcsLimiters.limiters;
  let l = cache.get(name);
  if (!l) {
    l = new RateLimiterDrizzle({
      storeClient: db,
      schema: rateLimitBuckets,
      keyPrefix: name,
      points: perMinute[name](),
      duration: 60,
      clearExpiredByTimeout: false,
    });
    cache.set(name, l);
  }
  return l;
}

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
    const res = await l.consume(key);
    return { allowed: true, headers: headersFor(l.points, res), retryAfterSeconds: 0 };
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    const retryAfterSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    return { allowed: false, headers: { ...headersFor(l.points, res), "retry-after": String(retryAfterSeconds) }, retryAfterSeconds };
  }
}

/** Reads a bucket without taking a point (failed-auth blocking is checked before the attempt). */
export async function peek(db: Db, name: LimitName, key: string): Promise<LimitOutcome> {
  const l = limiter(db, name);
  const res = await l.get(key);
  if (!res || res.consumedPoints < l.points) return { allowed: true, headers: {}, retryAfterSeconds: 0 };
  const retryAfterSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return { allowed: false, headers: { ...headersFor(l.points, res), "retry-after": String(retryAfterSeconds) }, retryAfterSeconds };
}
