import { eq, sql, type SQL } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { campaigns } from "../../db/schema";
import { recordEvent, recordEventSql, type EventSelect } from "../outbox/record-event";
import { groupCounters, pendingGroupsSql } from "./group-counters";

type CampaignRow = typeof campaigns.$inferSelect;

/** campaign_status, in the transaction that changed the status. */
export async function recordStatusEvent(tx: Tx, c: CampaignRow, previous: string, at: Date) {
  await recordEvent(
    tx,
    c.tenantId,
    "campaign_status",
    { id_campaign: c.id, name: c.name, status: c.status, previous_status: previous, groups: groupCounters(c) },
    at,
  );
}

/** Events of campaign_progress are at least this far apart per campaign (the last one is forced). */
export const progressEveryMs = 1000;

/**
 * The campaign_progress event of the campaign row `row` (an alias in `source`) as of `at`, built in SQL:
 * the loop's sent marks write it in the same statement as the counters (recordSentMany), and
 * recordProgressEvent writes it from the row in its transaction, so the payload has one definition.
 */
export function progressEventSql(row: string, source: SQL, at: Date): EventSelect {
  const r = (column: string) => sql.raw(`${row}.${column}`);
  const groups = sql`jsonb_build_object('total', ${r("total")}, 'sent', ${r("sent")}, 'pending', ${pendingGroupsSql(row)}, 'failed', ${r("failed")})`;
  return {
    source,
    tenantId: r("tenant_id"),
    payload: sql`jsonb_build_object('type', 'campaign_progress', 'timestamp', ${at.toISOString()}::text,
      'data', jsonb_build_object('id_campaign', ${r("id")}, 'name', ${r("name")}, 'status', ${r("status")}, 'groups', ${groups}))`,
  };
}

/** campaign_progress at most once a second per campaign (`force` for the last one), from the row as `tx` sees it. */
export async function recordProgressEvent(tx: Tx, c: CampaignRow, at: Date, force = false) {
  if (!force && c.lastProgressAt && at.getTime() - c.lastProgressAt.getTime() < progressEveryMs) return;
  await tx.update(campaigns).set({ lastProgressAt: at }).where(eq(campaigns.id, c.id));
  await recordEventSql(tx, "campaign_progress", progressEventSql("c", sql`${campaigns} c where c.id = ${c.id}`, at), at);
}
