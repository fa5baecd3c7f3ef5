import { asc, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, deliveries, segments } from "../../db/schema";
import { groupCounters } from "../dispatch/group-counters";
import { findCampaign } from "./find-campaign";
import { toBrasiliaIso } from "../time/brasilia";

export async function listCampaigns(db: Db, tenantId: string) {
  const rows = await db
    .select({ c: campaigns, segmentName: segments.name })
    .from(campaigns)
    .innerJoin(segments, eq(segments.id, campaigns.segmentId))
    .where(eq(campaigns.tenantId, tenantId))
    .orderBy(desc(campaigns.createdAt))
    .limit(200);
  return rows.map(({ c, segmentName }) => ({
    id_campaign: c.id,
    name: c.name,
    status: c.status,
    pause_reason: c.pauseReason,
    message_type: c.messageType,
    segment_name: segmentName,
    groups: groupCounters(c),
    scheduled_at: c.scheduledAt ? toBrasiliaIso(c.scheduledAt) : null,
    created_at: toBrasiliaIso(c.createdAt),
  }));
}

/** Per-group delivery state, for the dashboard's campaign page. */
export async function listDeliveries(db: Db, tenantId: string, campaignId: string) {
  await findCampaign(db, tenantId, campaignId);
  const rows = await db.select().from(deliveries).where(eq(deliveries.campaignId, campaignId)).orderBy(desc(deliveries.isMonitoring), asc(deliveries.position));
  return rows.map((d) => ({
    id_group: d.groupId,
    name: d.groupName,
    id_channel: d.channelId,
    monitoring: d.isMonitoring,
    state: d.state,
    attempts: d.attempts,
    error: d.error,
    sent_at: d.sentAt?.toISOString() ?? null,
    acked_at: d.ackedAt?.toISOString() ?? null,
    read_at: d.readAt?.toISOString() ?? null,
  }));
}
