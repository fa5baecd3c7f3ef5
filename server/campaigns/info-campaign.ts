import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client";
import { preparedPerDb } from "../../db/params";
import { campaigns, deliveries, segments } from "../../db/schema";
import { campaignNotFound } from "./find-campaign";
import { groupCounters } from "../dispatch/group-counters";
import { campaignEta, etaChannelsSql, etaNeedsNumbersSql } from "./campaign-eta";
import { channelCountersOf, type ChannelCounters } from "../dispatch/channel-counts";
import { savedSettingsSql } from "../settings/get-settings";

const monitoring = alias(deliveries, "monitoring");
const etaActive = etaNeedsNumbersSql(sql`${campaigns.status}`, sql`${campaigns.pauseReason}`);

/**
 * One indexed row, prepared once: the counters (also per channel) are kept exact by every delivery change; the
 * monitoring copy (at most one row, deliveries_monitoring_idx) is joined in, reported apart; what the ETA reads (the
 * tenant's settings, the campaign's numbers by primary key) is selected with it while the campaign may still send.
 */
const infoStatement = preparedPerDb((db: Db) =>
  db
    .select({
      id: campaigns.id,
      name: campaigns.name,
      status: campaigns.status,
      pauseReason: campaigns.pauseReason,
      channelIds: campaigns.channelIds,
      channelCounts: campaigns.channelCounts,
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
      // What the ETA reads (the tenant's saved settings, the campaign's numbers), only while it may still send.
      savedSettings: sql<unknown>`case when ${etaActive} then ${savedSettingsSql(campaigns.tenantId)} end`,
      etaNumbers: etaChannelsSql(sql`${campaigns.channelIds}`, etaActive),
    })
    .from(campaigns)
    .innerJoin(segments, eq(segments.id, campaigns.segmentId))
    .leftJoin(monitoring, and(eq(monitoring.campaignId, campaigns.id), eq(monitoring.isMonitoring, true)))
    .where(and(eq(campaigns.id, sql.placeholder("campaignId")), eq(campaigns.tenantId, sql.placeholder("tenantId"))))
    .prepare("info_campaign"),
);

export type CampaignInfo = Awaited<ReturnType<typeof infoCampaign>>;
export type { ChannelCounters };

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
    channels: channelCountersOf(c.channelIds, c.channelCounts),
    monitoringCopy:
      c.monitoringGroup && c.monitoringChannel && c.monitoringState
        ? { groupId: c.monitoringGroup, channelId: c.monitoringChannel, state: c.monitoringState, sentAt: c.monitoringSentAt }
        : null,
    scheduledAt: c.scheduledAt,
    createdAt: c.createdAt,
    seriesId: c.seriesId,
    eta: campaignEta({ ...c, open }, c.savedSettings, c.etaNumbers, now),
  };
}
