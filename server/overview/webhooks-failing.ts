import { and, count, eq, gte, max, min, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import type { OverviewAttention } from "./schema";

/**
 * The account's webhook deliveries in trouble, per event type: given up in the last 24 hours, or still
 * pending after a failed attempt (being retried). Partner apps' copies are theirs, not the account's.
 */
export async function webhooksFailing(db: Db, tenantId: string, now: Date): Promise<OverviewAttention[]> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const rows = await db
    .select({
      type: webhookDeliveries.type,
      n: count(),
      since: min(webhookDeliveries.createdAt),
      lastStatus: max(webhookDeliveries.lastStatus),
      lastError: max(webhookDeliveries.lastError),
    })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenantId),
        eq(webhookDeliveries.target, "tenant"),
        or(
          and(eq(webhookDeliveries.state, "failed"), gte(webhookDeliveries.finishedAt, dayAgo)),
          and(eq(webhookDeliveries.state, "pending"), sql`${webhookDeliveries.attempts} > 0`),
        ),
      ),
    )
    .groupBy(webhookDeliveries.type);
  return rows.map((r) => ({
    kind: "webhooks_failing" as const,
    id: r.type,
    name: r.type,
    state: r.type,
    detail: r.lastError ?? (r.lastStatus ? `HTTP ${r.lastStatus}` : null),
    count: r.n,
    since: r.since?.toISOString() ?? null,
  }));
}
