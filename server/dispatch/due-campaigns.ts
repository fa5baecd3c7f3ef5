import { and, asc, eq, inArray, isNull, lt, lte, min, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";

const active = or(
  inArray(campaigns.status, ["pending", "sending"]),
  and(eq(campaigns.status, "paused"), inArray(campaigns.pauseReason, ["schedule", "channel_offline"])),
);

/** Campaigns whose next step is due and that no worker holds. */
export async function dueCampaigns(db: Db, now: Date, limit: number) {
  const rows = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(active, lte(campaigns.nextRunAt, now), or(isNull(campaigns.leaseUntil), lt(campaigns.leaseUntil, now))))
    .orderBy(asc(campaigns.nextRunAt))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** The earliest next step of any active campaign (to know how long the engine may sleep). */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const [row] = await db.select({ at: min(campaigns.nextRunAt) }).from(campaigns).where(active);
  return row?.at ?? null;
}
