import { and, asc, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import { channels, deliveries } from "../../db/schema";

export const deliveryLeaseMs = 60_000;

/**
 * Takes up to `limit` pending deliveries of the campaign whose channel is connected, marking them
 * `sending` under a lease. FOR UPDATE SKIP LOCKED: two workers never take the same row.
 * The monitoring group's copy goes first (position -1), then the segment's order.
 */
export async function claimDeliveries(db: Db, campaignId: string, limit: number, now: Date) {
  // A normal commit: a claim lost on a crash would put an already sent delivery back to pending without
  // reconciliation. (Sent marks may commit asynchronously: a lost one leaves `sending`, which is reconciled.)
  return db.transaction(async (tx) => {
    const picked = await tx
      .select({ id: deliveries.id })
      .from(deliveries)
      .innerJoin(channels, eq(channels.id, deliveries.channelId))
      .where(
        and(
          eq(deliveries.campaignId, campaignId),
          eq(deliveries.state, "pending"),
          or(isNull(deliveries.notBefore), lte(deliveries.notBefore, now)),
          eq(channels.status, "connected"),
        ),
      )
      // The monitoring copy has position -1: ordering by position alone sends it first and uses the index.
      .orderBy(asc(deliveries.position))
      .limit(limit)
      .for("update", { of: deliveries, skipLocked: true });
    if (picked.length === 0) return [];
    return tx
      .update(deliveries)
      .set({ state: "sending", attempts: sql`${deliveries.attempts} + 1`, leaseUntil: new Date(now.getTime() + deliveryLeaseMs), updatedAt: now })
      .where(
        inArray(
          deliveries.id,
          picked.map((p) => p.id),
        ),
      )
      .returning();
  });
}

/** What the planner needs about the campaign's deliveries, in one query. */
export async function deliveryOutlook(db: Db, campaignId: string, now: Date) {
  const [row] = await db
    .select({
      sendable: sql<number>`count(*) filter (where ${deliveries.state} = 'pending' and (${deliveries.notBefore} is null or ${deliveries.notBefore} <= ${tsParam(now)}) and ${channels.status} = 'connected')`.mapWith(Number),
      waitingOnline: sql<number>`count(*) filter (where ${deliveries.state} in ('pending', 'sending') and ${channels.status} = 'connected')`.mapWith(Number),
      open: sql<number>`count(*) filter (where ${deliveries.state} in ('pending', 'sending'))`.mapWith(Number),
      nextRetryAt: sql<string | null>`min(${deliveries.notBefore}) filter (where ${deliveries.state} = 'pending' and ${deliveries.notBefore} > ${tsParam(now)})`,
    })
    .from(deliveries)
    .innerJoin(channels, eq(channels.id, deliveries.channelId))
    .where(eq(deliveries.campaignId, campaignId));
  return {
    sendableNow: row.sendable,
    channelsOffline: row.open > 0 && row.waitingOnline === 0,
    nextRetryAt: row.nextRetryAt ? new Date(row.nextRetryAt) : null,
  };
}
