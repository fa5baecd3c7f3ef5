import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/params";
import { campaigns, deliveries, segments } from "../../db/schema";
import { campaignNotFound } from "./find-campaign";
import { groupCounters } from "../dispatch/group-counters";
import { campaignEta } from "./campaign-eta";

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
      pauseReason: campaigns.pauseReason,
      channelIds: campaigns.channelIds,
      messageType: campaigns.messageType,
      segmentId: campaigns.segmentId,
      segmentName: segments.name,
      total: campaigns.total,
      sent: campaigns.sent,
      failed: campaigns.failed,
      scheduledAt: campaigns.scheduledAt,
      createdAt: campaigns.createdAt,
      seriesId: campaigns.seriesId,
      nextRunAt: campaigns.nextRunAt,
      finishedAt: campaigns.finishedAt,
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

/** One channel's share of a campaign's segment groups. */
export interface ChannelCounters {
  channelId: string;
  sent: number;
  pending: number;
  failed: number;
}

/**
 * The campaign's groups per channel (CONTRACT §7, segment groups only). A campaign sent through one channel
 * has its counters as that channel's (one indexed row, as before); one spread over several counts its rows
 * by channel (a walk over the campaign's deliveries).
 */
async function channelCounters(db: Db, c: { id: string; channelIds: string[]; sent: number; failed: number; total: number }): Promise<ChannelCounters[]> {
  if (c.channelIds.length <= 1) {
    const { sent, pending, failed } = groupCounters(c);
    return c.channelIds.map((channelId) => ({ channelId, sent, pending, failed }));
  }
  const rows = await db
    .select({
      channelId: deliveries.channelId,
      sent: sql<number>`count(*) filter (where ${deliveries.state} = 'sent')`.mapWith(Number),
      failed: sql<number>`count(*) filter (where ${deliveries.state} = 'failed')`.mapWith(Number),
      pending: sql<number>`count(*) filter (where ${deliveries.state} in ('pending', 'sending'))`.mapWith(Number),
    })
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, c.id), eq(deliveries.isMonitoring, false)))
    .groupBy(deliveries.channelId);
  // In the campaign's order of channels (the segment's, then those failover moved groups to); a channel whose
  // groups all moved away stays listed, with zeros.
  const counted = new Map(rows.map((r) => [r.channelId, r]));
  const others = rows.filter((r) => !c.channelIds.includes(r.channelId));
  return [...c.channelIds.map((channelId) => counted.get(channelId) ?? { channelId, sent: 0, pending: 0, failed: 0 }), ...others];
}

/** A campaign of this tenant with its segment's name, its group counters (also per channel) and its monitoring copy. */
export async function infoCampaign(db: Db, tenantId: string, campaignId: string, now = new Date()) {
  const [c] = await infoStatement(db).execute({ campaignId, tenantId });
  if (!c) throw campaignNotFound(campaignId);
  const copyOpen = c.monitoringState === "pending" || c.monitoringState === "sending" ? 1 : 0;
  const open = c.total - c.sent - c.failed + copyOpen;
  return {
    id: c.id,
    name: c.name,
    status: c.status,
    pauseReason: c.status === "paused" ? c.pauseReason : null,
    messageType: c.messageType,
    segmentId: c.segmentId,
    segmentName: c.segmentName,
    // The segment's groups only (docs/decisions.md#monitoring-copy): the monitoring copy is not one of them.
    groups: groupCounters(c),
    channels: await channelCounters(db, c),
    monitoringCopy:
      c.monitoringGroup && c.monitoringChannel && c.monitoringState
        ? { groupId: c.monitoringGroup, channelId: c.monitoringChannel, state: c.monitoringState, sentAt: c.monitoringSentAt }
        : null,
    scheduledAt: c.scheduledAt,
    createdAt: c.createdAt,
    seriesId: c.seriesId,
    eta: await campaignEta(db, tenantId, { ...c, open }, now),
  };
}
