/** The account's blocklist (docs/moderation.md#blocklist): numbers by their match key, so a ninth digit makes no second entry. */
import { and, asc, count, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { blocklistNumbers } from "../../db/schema";
import { phoneKey } from "../phones/phone";
import { toBrasiliaIso } from "../time/brasilia";

export async function listBlocklist(db: Db, tenantId: string) {
  const rows = await db.select().from(blocklistNumbers).where(eq(blocklistNumbers.tenantId, tenantId)).orderBy(asc(blocklistNumbers.addedAt));
  return { numbers: rows.map((r) => ({ phone: r.phone, added_at: toBrasiliaIso(r.addedAt) })), total: rows.length };
}

/** Adds, then removes (a number in both lists ends off the list); one transaction. */
export async function editBlocklist(db: Db, tenantId: string, input: { add: string[]; remove: string[] }, now: Date) {
  return db.transaction(async (tx) => {
    const add = new Map(input.add.map((p) => [phoneKey(p), p]));
    const added = add.size
      ? await tx
          .insert(blocklistNumbers)
          .values([...add].map(([key, phone]) => ({ tenantId, phoneKey: key, phone, addedAt: now })))
          .onConflictDoNothing()
          .returning({ key: blocklistNumbers.phoneKey })
      : [];
    const removeKeys = [...new Set(input.remove.map(phoneKey))];
    const removed = removeKeys.length
      ? await tx
          .delete(blocklistNumbers)
          .where(and(eq(blocklistNumbers.tenantId, tenantId), inArray(blocklistNumbers.phoneKey, removeKeys)))
          .returning({ key: blocklistNumbers.phoneKey })
      : [];
    const [total] = await tx.select({ n: count() }).from(blocklistNumbers).where(eq(blocklistNumbers.tenantId, tenantId));
    const removedSet = new Set(removed.map((r) => r.key));
    return { added: added.filter((a) => !removedSet.has(a.key)).length, removed: removed.filter((r) => !add.has(r.key)).length, total: total?.n ?? 0 };
  });
}

/** Which of these match keys are on the account's blocklist. */
export async function blockedKeys(db: Db, tenantId: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .select({ key: blocklistNumbers.phoneKey })
    .from(blocklistNumbers)
    .where(and(eq(blocklistNumbers.tenantId, tenantId), inArray(blocklistNumbers.phoneKey, keys)));
  return new Set(rows.map((r) => r.key));
}
