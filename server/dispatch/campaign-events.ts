import { eq, sql, type SQL } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { isoOf, type At } from "../../db/params";
import { campaigns } from "../../db/schema";
import { recordEventSql, type EventSelect } from "../outbox/record-event";
import type { EventData } from "../webhooks/events";
import { pendingGroupsSql } from "./group-counters";

type CampaignRow = typeof campaigns.$inferSelect;
type CampaignStatusData = EventData<"campaign_status">;

/** campaign_status, in the transaction that changed the status (the row as `tx` sees it, after the change). */
export async function recordStatusEvent(tx: Tx, c: CampaignRow, previous: string, at: Date) {
  const row = sql`(select c.*, ${previous}::text as previous_status from ${campaigns} c where c.id = ${c.id}) c`;
  await recordEventSql(tx, statusEventSql("c", row, at), at);
}

/** One SQL expression per field of a payload's object `T`, optional where the field is (undefined leaves it out). */
type SqlFields<T> = { [K in keyof T]: SQL };

/** jsonb_build_object of `fields`, in their order (the keys are code, never input). */
const jsonbObject = (fields: Record<string, SQL | undefined>) =>
  sql`jsonb_build_object(${sql.join(
    Object.entries(fields).flatMap(([key, value]) => (value ? [sql`${sql.raw(`'${key}'`)}, ${value}`] : [])),
    sql.raw(", "),
  )})`;

/**
 * The data of a campaign event of the row `row`: its id, name, status, `previous` (the previous status, on a
 * campaign_status after the first) and groups (the counters).
 */
function campaignData(row: string, previous?: SQL) {
  const r = (column: string) => sql.raw(`${row}.${column}`);
  const groups: SqlFields<CampaignStatusData["groups"]> = { total: r("total"), sent: r("sent"), pending: pendingGroupsSql(row), failed: r("failed") };
  const data: SqlFields<CampaignStatusData> = {
    id_campaign: r("id"),
    name: r("name"),
    status: r("status"),
    previous_status: previous,
    groups: jsonbObject(groups),
  };
  return jsonbObject(data);
}

/** A campaign event of `type` from the row `row` (an alias in `source`): the payload names its type too. */
const campaignEvent = (type: "campaign_status" | "campaign_progress", row: string, source: SQL, at: At, data: SQL): EventSelect => ({
  type,
  source,
  tenantId: sql.raw(`${row}.tenant_id`),
  payload: jsonbObject({ type: sql`${type}::text`, timestamp: sql`${isoOf(at)}::text`, data }),
});

/**
 * The campaign_status event of the row `row` (an alias in `source`), built in SQL: with the row's
 * `previous_status` column, or without one (`previous: false`, the creation's event).
 */
export function statusEventSql(row: string, source: SQL, at: At, { previous = true } = {}): EventSelect {
  return campaignEvent("campaign_status", row, source, at, campaignData(row, previous ? sql.raw(`${row}.previous_status`) : undefined));
}

/** Events of campaign_progress are at least this far apart per campaign (the last one is forced). */
export const progressEveryMs = 1000;

/**
 * The campaign_progress event of the campaign row `row` (an alias in `source`) as of `at`, built in SQL:
 * the loop's sent marks write it in the same statement as the counters (recordSentMany), and
 * recordProgressEvent writes it from the row in its transaction, so the payload has one definition.
 */
export function progressEventSql(row: string, source: SQL, at: At): EventSelect {
  return campaignEvent("campaign_progress", row, source, at, campaignData(row));
}

/** campaign_progress at most once a second per campaign (`force` for the last one), from the row as `tx` sees it. */
export async function recordProgressEvent(tx: Tx, c: CampaignRow, at: Date, force = false) {
  if (!force && c.lastProgressAt && at.getTime() - c.lastProgressAt.getTime() < progressEveryMs) return;
  await tx.update(campaigns).set({ lastProgressAt: at }).where(eq(campaigns.id, c.id));
  await recordEventSql(tx, progressEventSql("c", sql`${campaigns} c where c.id = ${c.id}`, at), at);
}
