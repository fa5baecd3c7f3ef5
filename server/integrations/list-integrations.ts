import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { integrations } from "../../db/schema";
import { decryptSecret, encryptSecret, needsReencryption } from "../crypto/secret-box";

export async function listIntegrations(db: Db, tenantId: string) {
  return db.select().from(integrations).where(eq(integrations.tenantId, tenantId)).orderBy(integrations.type);
}

export async function deleteIntegration(db: Db, tenantId: string, type: string) {
  const rows = await db
    .delete(integrations)
    .where(and(eq(integrations.tenantId, tenantId), eq(integrations.type, type)))
    .returning();
  return rows.length > 0;
}

/**
 * Key rotation: rewrites every integration still encrypted under a previous key (ENCRYPTION_KEY_PREVIOUS)
 * under the current ENCRYPTION_KEY. Rows no known key opens are counted, not touched.
 */
export async function reencryptIntegrations(db: Db) {
  const rows = await db.select().from(integrations);
  let rewritten = 0;
  let unreadable = 0;
  for (const row of rows) {
    if (!needsReencryption(row.credentials)) continue;
    let plaintext: string;
    try {
      plaintext = decryptSecret(row.credentials);
    } catch {
      unreadable++; // written under a key that is neither current nor listed as previous
      continue;
    }
    await db
      .update(integrations)
      .set({ credentials: encryptSecret(plaintext) })
      .where(and(eq(integrations.tenantId, row.tenantId), eq(integrations.type, row.type)));
    rewritten++;
  }
  return { rewritten, unreadable };
}
