import { and, eq, gt, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, deliveries } from "../../db/schema";

/**
 * At start on embedded PGlite, this process is the only one that can hold leases (it owns the data
 * directory), so any lease found was left by a process that died: let it go now instead of after
 * 60 s. Deliveries in flight expire, so the next step reconciles them with the provider.
 */
export async function releaseAbandonedLeases(db: Db, now: Date) {
  await db.update(campaigns).set({ leaseUntil: null }).where(isNotNull(campaigns.leaseUntil));
  await db
    .update(deliveries)
    .set({ leaseUntil: now })
    .where(and(eq(deliveries.state, "sending"), gt(deliveries.leaseUntil, now)));
}
