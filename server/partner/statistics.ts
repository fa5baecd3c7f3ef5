import { and, count, eq, gte, ne, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, deliveries } from "../../db/schema";

/**
 * The five PII-free aggregates of docs/decisions.md#partner-statistics over the last `days` days: campaigns created, and
 * their deliveries by state; reads are receipts that arrived in the period. Only observable reads are
 * counted: a provider without group receipts (Evolution API, capabilities.receipts false) reports none.
 */
export async function partnerStatistics(db: Db, tenantId: string, days: number, now: Date) {
  const since = new Date(now.getTime() - days * 24 * 60 * 60_000);
  // The campaigns' exact counters (kept by every delivery change; segment groups only, the monitoring
  // copy is not counted): O(campaigns), not O(deliveries).
  const [created] = await db
    .select({
      n: count(),
      total: sql<number>`coalesce(sum(${campaigns.total}), 0)`.mapWith(Number),
      sent: sql<number>`coalesce(sum(${campaigns.sent}), 0)`.mapWith(Number),
      failed: sql<number>`coalesce(sum(${campaigns.failed}), 0)`.mapWith(Number),
    })
    .from(campaigns)
    .where(and(eq(campaigns.tenantId, tenantId), gte(campaigns.createdAt, since)));
  const [reads] = await db
    .select({ n: count() })
    .from(deliveries)
    .innerJoin(campaigns, eq(campaigns.id, deliveries.campaignId))
    // The monitoring group's copy is not one of the campaign's groups (docs/decisions.md#monitoring-copy): its reads do not count.
    // A read is of a message that went out (record-receipt.ts): rows past their claim, deliveries_campaign_group_uq's.
    .where(and(eq(campaigns.tenantId, tenantId), eq(deliveries.isMonitoring, false), ne(deliveries.state, "pending"), gte(deliveries.readAt, since)));
  return {
    campaigns: created.n,
    total_reads: reads.n,
    messages_total: created.total,
    messages_sent: created.sent,
    messages_failed: created.failed,
  };
}
