import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/params";
import { campaigns, deliveries, segments } from "../../db/schema";
import { campaignNotFound } from "./find-campaign";
import { groupCounters } from "../dispatch/group-counters";

const monitoring = alias(deliveries, "monitoring");

/**
 * One indexed row, prepared once: the counters are kept exact by every delivery change; the monitoring
 * copy (at most one row, deliveries_monitoring_idx) is joined in, reported apart.
 */
const infoStatement = preparedPerDb((db: Db) =>
  db
    .select({
      id: campaigns.id,
      name: campaigns.name,
      status: campaigns.status,
      messageType: campaigns.messageType,
      segmentId: campaigns.segmentId,
      segmentName: segments.name,
      total: campaigns.total,
      sent: campaigns.sent,
      failed: campaigns.failed,
      scheduledAt: campaigns.scheduledAt,
      createdAt: campaigns.createdAt,
      monitoringGroup: monitoring.groupId,
      monitoringChannel: monitoring.channelId,
      monitoringState: monitoring.state,
      monitoringSentAt: monitoring.sentAt,
    })
    .from(campaigns)
    .innerJoin(segments, eq(segments.id, campaigns.segmentId))
    .leftJoin(monitoring, and(eq(monitoring.campaignId, campaigns.id), eq(monitoring.isMonitoring, true)))
    .where(and(eq(campaigns.id, sql.placeholder("campaignId")), eq(campaigns.tenantId, sql.placeholder("tenantId"))))
    .prepare("info_campaign"),
);

export type CampaignInfo = Awaited<ReturnType<typeof infoCampaign>>;

/** A campaign of this tenant with its segment's name, its group counters and its monitoring copy. */
export async function infoCampaign(db: Db, tenantId: string, campaignId: string) {
  const [c] = await infoStatement(db).execute({ campaignId, tenantId });
  if (!c) throw campaignNotFound(campaignId);
  return {
    id: c.id,
    name: c.name,
    status: c.status,
    messageType: c.messageType,
    segmentId: c.segmentId,
    segmentName: c.segmentName,
    // The segment's groups only (docs/decisions.md#monitoring-copy): the monitoring copy is not one of them.
    groups: groupCounters(c),
    monitoringCopy:
      c.monitoringGroup && c.monitoringChannel && c.monitoringState
        ? { groupId: c.monitoringGroup, channelId: c.monitoringChannel, state: c.monitoringState, sentAt: c.monitoringSentAt }
        : null,
    scheduledAt: c.scheduledAt,
    createdAt: c.createdAt,
  };
}
