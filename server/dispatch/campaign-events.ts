import { eq, sql, type SQL } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { isoOf, type At } from "../../db/params";
import { relation, tableAs, type Relation } from "../../db/relation";
import { campaigns } from "../../db/schema";
import { recordEventSql, type EventSelect } from "../outbox/record-event";
import type { EventData } from "../webhooks/events";
import { pendingGroupsSql } from "./group-counters";

type CampaignRow = typeof campaigns.$inferSelect;
type CampaignStatusData = EventData<"campaign_status">;

/** The columns a campaign event reads of its campaign row. */
export type CampaignEventRow = Relation<"id" | "tenant_id" | "name" | "status" | "total" | "sent" | "failed">;

/** campaign_status, in the transaction that changed the status (the row as `tx` sees it, after the change). */
export async function recordStatusEvent(tx: Tx, c: CampaignRow, previous: string, at: Date) {
  const row = relation("c", ["id", "tenant_id", "name", "status", "total", "sent", "failed", "previous_status"]);
  const source = sql`(select c.*, ${previous}::text as previous_status from ${campaigns} c where c.id = ${c.id}) ${row.name}`;
  await recordEventSql(tx, statusEventSql(row, source, at, row.col("previous_status")), at);
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
function campaignData(row: CampaignEventRow, previous?: SQL) {
  const groups: SqlFields<CampaignStatusData["groups"]> = {
    total: row.col("total"),
    sent: row.col("sent"),
    pending: pendingGroupsSql(row),
    failed: row.col("failed"),
  };
  const data: SqlFields<CampaignStatusData> = {
    id_campaign: row.col("id"),
    name: row.col("name"),
    status: row.col("status"),
    previous_status: previous,
    groups: jsonbObject(groups),
  };
  return jsonbObject(data);
}

/** A campaign event of `type` from the row `row` (named in `source`): the payload names its type too. */
const campaignEvent = (type: "campaign_status" | "campaign_progress", row: CampaignEventRow, source: SQL, at: At, data: SQL): EventSelect => ({
  type,
  source,
  tenantId: row.col("tenant_id"),
  payload: jsonbObject({ type: sql`${type}::text`, timestamp: sql`${isoOf(at)}::text`, data }),
});

/**
 * The campaign_status event of the row `row` (named in `source`), built in SQL: with `previous`, the previous status
 * (a column of the row's source), or without one (the creation's event).
 */
export function statusEventSql(row: CampaignEventRow, source: SQL, at: At, previous?: SQL): EventSelect {
  return campaignEvent("campaign_status", row, source, at, campaignData(row, previous));
}

/** Events of campaign_progress are at least this far apart per campaign (the last one is forced). */
export const progressEveryMs = 1000;

/**
 * The campaign_progress event of the campaign row `row` (named in `source`) as of `at`, built in SQL:
 * the loop's sent marks write it in the same statement as the counters (recordSentMany), and
 * recordProgressEvent writes it from the row in its transaction, so the payload has one definition.
 */
export function progressEventSql(row: CampaignEventRow, source: SQL, at: At): EventSelect {
  return campaignEvent("campaign_progress", row, source, at, campaignData(row));
}

/** campaign_progress at most once a second per campaign (`force` for the last one), from the row as `tx` sees it. */
export async function recordProgressEvent(tx: Tx, c: CampaignRow, at: Date, force = false) {
  if (!force && c.lastProgressAt && at.getTime() - c.lastProgressAt.getTime() < progressEveryMs) return;
  await tx.update(campaigns).set({ lastProgressAt: at }).where(eq(campaigns.id, c.id));
  const row = tableAs(campaigns, "c");
  await recordEventSql(tx, progressEventSql(row, sql`${campaigns} ${row.name} where ${row.col("id")} = ${c.id}`, at), at);
}
