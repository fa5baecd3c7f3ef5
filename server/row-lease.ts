import { inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Db, Tx } from "../db/client";
import { tsParam } from "../db/errors";
import type { metaEvents, webhookDeliveries } from "../db/schema";

/**
 * Leases on outbox rows (webhook deliveries, Meta's events): a worker claims due rows by setting their
 * `lease_until`, works, and clears it when it records the outcome. The lease is short and renewed while the
 * work runs, so the rows of a worker that died come free within `rowLeaseMs`, not minutes later; the
 * value a holder wrote is its token, so a renewal never extends a lease another worker has taken over.
 * Delivery stays at least once: a holder stalled past its lease may still send what a new holder sends.
 */
export const rowLeaseMs = 30_000;
const renewEveryMs = 10_000;

type LeasedTable = typeof webhookDeliveries | typeof metaEvents;

/** Held by no worker at `now`. */
export const leaseFree = (table: LeasedTable, now: Date) => or(isNull(table.leaseUntil), lt(table.leaseUntil, now));

/** One worker's lease on the rows it claimed. */
export interface RowLease<T> {
  rows: T[];
  /** Runs `work` with the lease renewed every 10 s until it settles. */
  hold<R>(work: () => Promise<R>): Promise<R>;
}

/**
 * Claims the rows `pick` selects (its query locks them `for update skip locked`) in one transaction, leased
 * until `now + rowLeaseMs`.
 */
export async function claimRows<T extends { id: number }>(db: Db, table: LeasedTable, now: Date, pick: (tx: Tx) => Promise<T[]>): Promise<RowLease<T>> {
  let token = new Date(now.getTime() + rowLeaseMs);
  const rows = await db.transaction(async (tx) => {
    const picked = await pick(tx);
    if (picked.length) await tx.execute(sql`update ${table} set lease_until = ${tsParam(token)} where ${inArray(table.id, ids(picked))}`);
    return picked;
  });
  const renew = async () => {
    const next = new Date(Date.now() + rowLeaseMs);
    // Rows already recorded (lease_until null) or taken over (another token) are left alone.
    await db.execute(sql`update ${table} set lease_until = ${tsParam(next)} where ${inArray(table.id, ids(rows))} and lease_until = ${tsParam(token)}`);
    token = next;
  };
  return {
    rows,
    async hold(work) {
      if (rows.length === 0) return work();
      let renewing: Promise<void> = Promise.resolve();
      const timer = setInterval(() => {
        renewing = renewing.then(renew).catch((err) => console.error(`[lease] renewal failed: ${(err as Error).message}`));
      }, renewEveryMs);
      timer.unref?.();
      try {
        return await work();
      } finally {
        clearInterval(timer);
        await renewing;
      }
    },
  };
}

const ids = (rows: { id: number }[]) => rows.map((r) => r.id);
