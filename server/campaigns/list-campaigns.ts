import { and, asc, desc, eq, ne, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, deliveries, segments } from "../../db/schema";
import { type CampaignContent, contentForGroup, contentText } from "../dispatch/campaign-content";
import { encodeDeliveryKey } from "../dispatch/delivery-key";
import { groupCounters } from "../dispatch/group-counters";
import { findCampaign } from "./find-campaign";

/** The tenant's latest 200 campaigns (of one segment when given) with their segment's name and group counters, newest first. */
export async function listCampaigns(db: Db, tenantId: string, segmentId?: string) {
  const rows = await db
    .select({ c: campaigns, segmentName: segments.name })
    .from(campaigns)
    .innerJoin(segments, eq(segments.id, campaigns.segmentId))
    .where(and(eq(campaigns.tenantId, tenantId), segmentId ? eq(campaigns.segmentId, segmentId) : undefined))
    .orderBy(desc(campaigns.createdAt))
    .limit(200);
  return rows.map(({ c, segmentName }) => ({
    id: c.id,
    name: c.name,
    status: c.status,
    pauseReason: c.pauseReason,
    messageType: c.messageType,
    segmentId: c.segmentId,
    segmentName,
    groups: groupCounters(c),
    scheduledAt: c.scheduledAt,
    createdAt: c.createdAt,
    seriesId: c.seriesId,
  }));
}

/**
 * Per-group delivery state, for the dashboard's campaign page. `text`: what a sent group got when the campaign's
 * texts hold variations (null otherwise: every group got the campaign's text), {{data}}/{{hora}} at its sent_at.
 */
export async function listDeliveries(db: Db, tenantId: string, campaignId: string) {
  const campaign = await findCampaign(db, tenantId, campaignId);
  const content = campaign.content as CampaignContent;
  // Every row, in two arms that each read a partial index by campaign (pending: deliveries_open_idx; the others:
  // deliveries_campaign_group_uq); no index holds all of a campaign's rows.
  const everyState = or(eq(deliveries.state, "pending"), ne(deliveries.state, "pending"));
  const rows = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, campaignId), everyState))
    .orderBy(desc(deliveries.isMonitoring), asc(deliveries.position));
  const sentText = (d: (typeof rows)[number], at: Date) =>
    contentText(contentForGroup(content, encodeDeliveryKey(campaignId, d.groupId), { groupName: d.groupName, at }));
  return rows.map((d) => ({ ...d, text: content.variations && d.sentAt ? sentText(d, d.sentAt) : null }));
}
