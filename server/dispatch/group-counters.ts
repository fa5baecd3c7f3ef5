import { sql } from "drizzle-orm";
import type { Relation } from "../../db/relation";

/**
 * A campaign's groups by delivery state, from the counters every delivery change keeps exact: the
 * segment's groups only, the monitoring copy is not one of them (docs/decisions.md#monitoring-copy).
 * info-campaign, the dashboard's list and the campaign_status/campaign_progress events report it.
 */
export function groupCounters(c: { total: number; sent: number; failed: number }) {
  return { total: c.total, sent: c.sent, pending: c.total - c.sent - c.failed, failed: c.failed };
}

/** groupCounters' `pending` in SQL, of a campaigns row (the table, an alias, a CTE of its columns): statements that decide on it. */
export const pendingGroupsSql = (row: Relation<"total" | "sent" | "failed">) => sql`(${row.col("total")} - ${row.col("sent")} - ${row.col("failed")})`;
