import { and, asc, desc, eq, gt, inArray, isNull, lte, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";
import { groupCounters } from "../dispatch/group-counters";
import type { OverviewCampaign } from "./schema";

/** At most this many campaigns in each of the overview's two lists. */
export const overviewListLimit = 10;

function overviewCampaign(c: typeof campaigns.$inferSelect): OverviewCampaign {
  return {
    id_campaign: c.id,
    name: c.name,
    status: c.status,
    pause_reason: c.pauseReason,
    groups: groupCounters(c),
    scheduled_at: c.scheduledAt?.toISOString() ?? null,
    started_at: c.startedAt?.toISOString() ?? null,
  };
}

/**
 * The campaigns under way (sending, paused, and pending ones already due: waiting for the queue or a
 * window), most recently started first; and the next scheduled ones, soonest first.
 */
export async function overviewCampaigns(db: Db, tenantId: string, now: Date) {
  const ofTenant = eq(campaigns.tenantId, tenantId);
  const [active, scheduled] = await Promise.all([
    db
      .select()
      .from(campaigns)
      .where(
        and(
          ofTenant,
          or(
            inArray(campaigns.status, ["sending", "paused"]),
            and(eq(campaigns.status, "pending"), or(isNull(campaigns.scheduledAt), lte(campaigns.scheduledAt, now))),
          ),
        ),
      )
      .orderBy(desc(campaigns.startedAt), desc(campaigns.createdAt))
      .limit(overviewListLimit),
    db
      .select()
      .from(campaigns)
      .where(and(ofTenant, eq(campaigns.status, "pending"), gt(campaigns.scheduledAt, now)))
      .orderBy(asc(campaigns.scheduledAt))
      .limit(overviewListLimit),
  ]);
  return { active: active.map(overviewCampaign), scheduled: scheduled.map(overviewCampaign) };
}
