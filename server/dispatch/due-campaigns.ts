import { and, asc, eq, inArray, isNull, lt, lte, min, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";

const active = or(
  inArray(campaigns.status, ["pending", "sending"]),
  and(eq(campaigns.status, "paused"), inArray(campaigns.pauseReason, ["schedule", "channel_offline"])),
);

/**
 * Campaigns whose next step is due and that no worker holds, taken round-robin across tenants
 * (docs/decisions.md#limits-abuse-retention, "Fairness"): each tenant's longest-waiting campaign first, then each tenant's second,
 * and so on; within a turn, the longest-waiting first. A tenant with many campaigns (or one that is
 * always due, at zero pacing) cannot push another tenant's campaign out of the first `limit`. Every
 * engine takes its work here: the in-process runner, the Inngest engine's wake-up and its sweep.
 */
export async function dueCampaigns(db: Db, now: Date, limit: number) {
  return (await dueCampaignRows(db, now, limit)).map((r) => r.id);
}

/** dueCampaigns with each campaign's tenant (the in-process pool spreads its workers across tenants). */
export async function dueCampaignRows(db: Db, now: Date, limit: number): Promise<{ id: string; tenantId: string }[]> {
  const ranked = db
    .select({
      id: campaigns.id,
      tenantId: campaigns.tenantId,
      nextRunAt: campaigns.nextRunAt,
      turn: sql<number>`row_number() over (partition by ${campaigns.tenantId} order by ${campaigns.nextRunAt}, ${campaigns.id})`.as("turn"),
    })
    .from(campaigns)
    .where(and(active, lte(campaigns.nextRunAt, now), or(isNull(campaigns.leaseUntil), lt(campaigns.leaseUntil, now))))
    .as("ranked");
  return db.select({ id: ranked.id, tenantId: ranked.tenantId }).from(ranked).orderBy(asc(ranked.turn), asc(ranked.nextRunAt), asc(ranked.id)).limit(limit);
}

/**
 * The earliest next step of any active campaign (to know how long the engine may sleep). A campaign
 * that a worker holds is due when its lease ends, not before (dueCampaigns would not return it): a
 * runner beside another process's long step sleeps instead of asking again at once.
 */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const [row] = await db
    .select({ at: min(sql<Date>`greatest(${campaigns.nextRunAt}, ${campaigns.leaseUntil})`) })
    .from(campaigns)
    .where(active);
  const at = row?.at as Date | string | null | undefined;
  return at ? new Date(at) : null;
}
