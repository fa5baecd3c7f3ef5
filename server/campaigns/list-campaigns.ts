import { asc, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, deliveries, segments } from "../../db/schema";
import { groupCounters } from "../dispatch/group-counters";
import { findCampaign } from "./find-campaign";

/** The tenant's latest 200 campaigns with their segment's name and group counters, newest first. */
export async function listCampaigns(db: Db, tenantId: string) {
  const rows = await db
    .select({ c: campaigns, segmentName: segments.name })
    .from(campaigns)
    .innerJoin(segments, eq(segments.id, campaigns.segmentId))
    .where(eq(campaigns.tenantId, tenantId))
    .orderBy(desc(campaigns.createdAt))
    .limit(200);
  return rows.map(({ c, segmentName }) => ({
    id: c.id,
    name: c.name,
    status: c.status,
    pauseReason: c.pauseReason,
    messageType: c.messageType,
    segmentName,
    groups: groupCounters(c),
    scheduledAt: c.scheduledAt,
    createdAt: c.createdAt,
    seriesId: c.seriesId,
  }));
}

/** Per-group delivery state, for the dashboard's campaign page. */
export async function listDeliveries(db: Db, tenantId: string, campaignId: string) {
  await findCampaign(db, tenantId, campaignId);
  const rows = await db.select().from(deliveries).where(eq(deliveries.campaignId, campaignId)).orderBy(desc(deliveries.isMonitoring), asc(deliveries.position));
  return rows;
}
