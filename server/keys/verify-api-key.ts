import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys, rateLimitBuckets } from "../../db/schema";
import { commitWithoutFlush, tsParam } from "../../db/errors";
import { env } from "../env";
import { apiKeyPattern, sha256Hex } from "./api-key-format";
import { processWide } from "../process-state";

export interface VerifiedKey {
  apiKeyId: string;
  tenantId: string;
  /** The key's first characters as stored (api_keys.prefix): how the audit log names it (docs/team.md#audit-log). */
  apiKeyPrefix: string;
}

/** A rate-limit bucket read alongside the key (points and expiry), or null when it has none. */
export interface BucketRow {
  points: number;
  expire: Date | null;
}

/**
 * Keys that authenticated in the last API_KEY_CACHE_SECONDS (default 5), by hash: a busy client's
 * requests skip the lookup. Revoking in this process forgets the key at once; a revocation made by
 * another process (a second server on the same PostgreSQL) takes effect within the TTL. On globalThis:
 * Next bundles this module once per route, and the dashboard's revoke must reach the REST facade's copy.
 */
interface CachedKey {
  key: VerifiedKey;
  expires: number;
  lastUsedWritten: number;
}
const keyCache = () => processWide("apiKeyCache", () => new Map<string, CachedKey>());
const maxCachedKeys = 10_000;

/** Forget a revoked key (every process that revokes calls this; others wait out the TTL). */
export function forgetApiKey(apiKeyId: string) {
  for (const [hash, entry] of keyCache()) if (entry.key.apiKeyId === apiKeyId) keyCache().delete(hash);
}

/** Resolves a presented key to its tenant; null when unknown, revoked or malformed. */
export async function verifyApiKey(db: Db, presented: string, now: Date): Promise<VerifiedKey | null> {
  return (await lookupApiKey(db, presented, now)).key;
}

/**
 * The key and, when `bucketKey` is given, that rate-limit bucket, in one round trip: the REST facade
 * reads the caller's failed-authentication bucket with the key it checks.
 */
export async function lookupApiKey(
  db: Db,
  presented: string,
  now: Date,
  bucketKey?: string,
): Promise<{ key: VerifiedKey | null; bucket: BucketRow | null; cached: boolean }> {
  const valid = apiKeyPattern.test(presented);
  if (!valid && !bucketKey) return { key: null, bucket: null, cached: false };
  const hash = valid ? sha256Hex(presented) : "";
  const cached = valid ? keyCache().get(hash) : undefined;
  if (cached && cached.expires > now.getTime()) {
    // A key that just authenticated: no lookup, and no failed-authentication check (it is not guessing).
    if (now.getTime() - cached.lastUsedWritten >= 60_000) {
      cached.lastUsedWritten = now.getTime();
      await touchLastUsed(db, cached.key.apiKeyId, now);
    }
    return { key: cached.key, bucket: null, cached: true };
  }
  const at = tsParam(now);
  const keyCol = (col: string) => sql.raw(col);
  const ofKey = (col: string) => sql`(select ${keyCol(col)} from ${apiKeys} where key_hash = ${hash} and revoked_at is null limit 1)`;
  const ofBucket = (col: string) =>
    bucketKey ? sql`(select ${keyCol(col)} from ${rateLimitBuckets} where key = ${bucketKey} and (expire > ${at} or expire is null))` : sql`null`;
  const [row] = await db
    .select({
      id: sql<string | null>`${ofKey("id")}`,
      tenantId: sql<string | null>`${ofKey("tenant_id")}`,
      lastUsedAt: sql<string | Date | null>`${ofKey("last_used_at")}`,
      points: sql<number | null>`${ofBucket("points")}`,
      expire: sql<string | Date | null>`${ofBucket("expire")}`,
    })
    .from(sql`(select 1) as one`);
  const bucket = row.points === null || row.points === undefined ? null : { points: Number(row.points), expire: row.expire ? new Date(row.expire) : null };
  if (!row.id || !row.tenantId) return { key: null, bucket, cached: false };
  // last_used_at at one-minute resolution: a write only when the stored value is older than that.
  let lastUsed = row.lastUsedAt ? new Date(row.lastUsedAt).getTime() : 0;
  if (now.getTime() - lastUsed >= 60_000) {
    await touchLastUsed(db, row.id, now);
    lastUsed = now.getTime();
  }
  const key = { apiKeyId: row.id, tenantId: row.tenantId, apiKeyPrefix: presented.slice(0, 12) };
  const ttlMs = env.apiKeyCacheSeconds * 1000;
  if (ttlMs > 0) {
    const cache = keyCache();
    if (cache.size >= maxCachedKeys) cache.delete(cache.keys().next().value!);
    cache.set(hash, { key, expires: now.getTime() + ttlMs, lastUsedWritten: lastUsed });
  }
  return { key, bucket, cached: false };
}

/**
 * Without waiting for the WAL flush: the request that carries it may be a read, and a crash of the
 * database server losing its last ~0.6 s only leaves a key's "last used" a minute older.
 */
async function touchLastUsed(db: Db, id: string, now: Date) {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, new Date(now.getTime() - 60_000))), commitWithoutFlush));
}
