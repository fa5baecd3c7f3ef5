import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, segments } from "../../db/schema";
import { NotFound } from "../errors";
import { toBrasiliaIso } from "./scheduled-at";

/** One indexed row: the counters are kept exact by every delivery change. */
export async function infoCampaign(db: Db, tenantId: string, campaignId: string) {
  const [row] = await db
    .select({ c: campaigns, segmentName: segments.name })
    .from(campaigns)
    .innerJoin(segments, eq(segments.id, campaigns.segmentId))
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.tenantId, tenantId)));
  if (!row) throw new NotFound(`Campaign ${campaignId} not found.`);
  const c = row.c;
  return {
    success: true as const,
    id_campaign: c.id,
    name: c.name,
    status: c.status,
    message_type: c.messageType,
    id_segment: c.segmentId,
    segment_name: row.segmentName,
    groups: { total: c.total, sent: c.sent, pending: c.total - c.sent - c.failed, failed: c.failed },
    scheduled_at: c.scheduledAt ? toBrasiliaIso(c.scheduledAt) : null,
    created_at: toBrasiliaIso(c.createdAt),
  };
}
