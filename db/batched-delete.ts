import type { SQL } from "drizzle-orm";
import type { Db } from "./client";
import { affectedRows } from "./params";

/** Rows removed per statement: each statement is its own short transaction holding row locks only. */
export const maintenanceBatch = 5_000;

/**
 * Runs `statement(limit)` (a `delete … where key in (select key … limit N)`) until a round removes fewer
 * than a batch: a backlog goes in several short statements instead of one long one, never a table lock.
 */
export async function deleteInBatches(db: Db, statement: (limit: number) => SQL, batch = maintenanceBatch): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = affectedRows(await db.execute(statement(batch)));
    total += removed;
    if (removed < batch) return total;
  }
}
