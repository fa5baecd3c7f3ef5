import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { apiKeyPattern, sha256Hex } from "./api-key-format";

/** Resolves a presented key to its tenant; null when unknown, revoked or malformed. */
export async function verifyApiKey(db: Db, presented: string, now: Date) {
  if (!apiKeyPattern.test(presented)) return null;
  const [row] = await db
    .select({ id: apiKeys.id, tenantId: apiKeys.tenantId })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, sha256Hex(presented)), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row) return null;
  // last_used_at at one-minute resolution: no write on every request.
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(apiKeys.id, row.id),
        or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, new Date(now.getTime() - 60_000))),
      ),
    );
  return { apiKeyId: row.id, tenantId: row.tenantId };
}
