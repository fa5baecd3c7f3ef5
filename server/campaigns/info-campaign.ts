import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/params";
import { campaigns, deliveries, segments } from "../../db/schema";
import { campaignNotFound } from "./find-campaign";
import { toBrasiliaIso } from "../time/brasilia";

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

/** `readsAvailable`: the provider reports group reads (capabilities.receipts); CONTRACT.md §5 "Receipts". */
export async function infoCampaign(db: Db, tenantId: string, campaignId: string, readsAvailable = true) {
  const [c] = await infoStatement(db).execute({ campaignId, tenantId });
  if (!c) throw campaignNotFound(campaignId);
  return {
    success: true as const,
    id_campaign: c.id,
    name: c.name,
    status: c.status,
    message_type: c.messageType,
    id_segment: c.segmentId,
    segment_name: c.segmentName,
    // The segment's groups only (CONTRACT.md §3): the monitoring copy is not one of them.
    groups: { total: c.total, sent: c.sent, pending: c.total - c.sent - c.failed, failed: c.failed },
    monitoring_group:
      c.monitoringGroup && c.monitoringChannel && c.monitoringState
        ? {
            id_group: c.monitoringGroup,
            id_channel: c.monitoringChannel,
            status: c.monitoringState,
            sent_at: c.monitoringSentAt ? toBrasiliaIso(c.monitoringSentAt) : null,
          }
        : null,
    reads_available: readsAvailable,
    scheduled_at: c.scheduledAt ? toBrasiliaIso(c.scheduledAt) : null,
    created_at: toBrasiliaIso(c.createdAt),
  };
}
