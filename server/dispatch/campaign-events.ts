import { eq, sql, type SQL } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { campaigns } from "../../db/schema";
import { recordEventSql, type EventSelect, type OutboxEventType } from "../outbox/record-event";
import { pendingGroupsSql } from "./group-counters";

type CampaignRow = typeof campaigns.$inferSelect;

/** campaign_status, in the transaction that changed the status (the row as `tx` sees it, after the change). */
export async function recordStatusEvent(tx: Tx, c: CampaignRow, previous: string, at: Date) {
  const row = sql`(select c.*, ${previous}::text as previous_status from ${campaigns} c where c.id = ${c.id}) c`;
  await recordEventSql(tx, statusEventSql("c", row, at), at);
}

/** The data of a campaign event of the row `row`: its id, name, status and groups (the counters). */
function campaignData(row: string, extra?: SQL) {
  const r = (column: string) => sql.raw(`${row}.${column}`);
  const groups = sql`jsonb_build_object('total', ${r("total")}, 'sent', ${r("sent")}, 'pending', ${pendingGroupsSql(row)}, 'failed', ${r("failed")})`;
  return sql`jsonb_build_object('id_campaign', ${r("id")}, 'name', ${r("name")}, 'status', ${r("status")}${extra ?? sql``}, 'groups', ${groups})`;
}

/** A campaign event of `type` from the row `row` (an alias in `source`): the payload names its type too. */
const campaignEvent = (type: OutboxEventType, row: string, source: SQL, at: Date, data: SQL): EventSelect => ({
  type,
  source,
  tenantId: sql.raw(`${row}.tenant_id`),
  payload: sql`jsonb_build_object('type', ${type}::text, 'timestamp', ${at.toISOString()}::text, 'data', ${data})`,
});

/**
 * The campaign_status event of the row `row` (an alias in `source`), built in SQL: with the row's
 * `previous_status` column, or without one (`previous: false`, the creation's event).
 */
export function statusEventSql(row: string, source: SQL, at: Date, { previous = true } = {}): EventSelect {
  const extra = previous ? sql.raw(`, 'previous_status', ${row}.previous_status`) : undefined;
  return campaignEvent("campaign_status", row, source, at, campaignData(row, extra));
}

/** Events of campaign_progress are at least this far apart per campaign (the last one is forced). */
export const progressEveryMs = 1000;

/**
 * The campaign_progress event of the campaign row `row` (an alias in `source`) as of `at`, built in SQL:
 * the loop's sent marks write it in the same statement as the counters (recordSentMany), and
 * recordProgressEvent writes it from the row in its transaction, so the payload has one definition.
 */
export function progressEventSql(row: string, source: SQL, at: Date): EventSelect {
  return campaignEvent("campaign_progress", row, source, at, campaignData(row));
}

/** campaign_progress at most once a second per campaign (`force` for the last one), from the row as `tx` sees it. */
export async function recordProgressEvent(tx: Tx, c: CampaignRow, at: Date, force = false) {
  if (!force && c.lastProgressAt && at.getTime() - c.lastProgressAt.getTime() < progressEveryMs) return;
  await tx.update(campaigns).set({ lastProgressAt: at }).where(eq(campaigns.id, c.id));
  await recordEventSql(tx, progressEventSql("c", sql`${campaigns} c where c.id = ${c.id}`, at), at);
}
