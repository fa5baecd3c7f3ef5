import { and, count, eq, gte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, deliveries } from "../../db/schema";

/**
 * The five PII-free aggregates of CONTRACT.md §3 over the last `days` days: campaigns created, and
 * their deliveries by state; reads are receipts that arrived in the period.
 */
export async function partnerStatistics(db: Db, tenantId: string, days: number, now: Date) {
  const since = new Date(now.getTime() - days * 24 * 60 * 60_000);
  const [created] = await db
    .select({ n: count() })
    .from(campaigns)
    .where(and(eq(campaigns.tenantId, tenantId), gte(campaigns.createdAt, since)));
  const [messages] = await db
    .select({
      total: count(),
      sent: sql<number>`count(*) filter (where ${deliveries.state} = 'sent')`.mapWith(Number),
      failed: sql<number>`count(*) filter (where ${deliveries.state} = 'failed')`.mapWith(Number),
    })
    .from(deliveries)
    .innerJoin(campaigns, eq(campaigns.id, deliveries.campaignId))
    .where(and(eq(campaigns.tenantId, tenantId), gte(campaigns.createdAt, since)));
  const [reads] = await db
    .select({ n: count() })
    .from(deliveries)
    .innerJoin(campaigns, eq(campaigns.id, deliveries.campaignId))
    .where(and(eq(campaigns.tenantId, tenantId), gte(deliveries.readAt, since)));
  return {
    campaigns: created.n,
    total_reads: reads.n,
    messages_total: messages.total,
    messages_sent: messages.sent,
    messages_failed: messages.failed,
  };
}
