import { getTableColumns, inArray, sql } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import type { At, Bind } from "../../db/params";
import { relation } from "../../db/relation";
import { auditLog, campaigns } from "../../db/schema";
import { eventsRecorded, insertEventsSql } from "../outbox/record-event";
import { progressEventSql, statusEventSql } from "./campaign-events";

type Status = (typeof campaigns.$inferSelect)["status"];
type PauseReason = (typeof campaigns.$inferSelect)["pauseReason"];

/** The campaign status transitions (docs/decisions.md#campaign-status, docs/dispatch.md); anything else is refused. */
const allowed: Record<Status, Status[]> = {
  pending: ["sending", "paused", "canceled", "completed", "failed"],
  sending: ["paused", "completed", "failed", "canceled"],
  paused: ["sending", "pending", "canceled", "completed", "failed"],
  completed: [],
  failed: [],
  canceled: [],
};

export const canTransition = (from: Status, to: Status) => allowed[from].includes(to);

/**
 * Moves a campaign from one of `from` to `to` (compare-and-set on the status) and records `campaign_status`
 * (and, to a final status, the last `campaign_progress`) in the same statement: one round trip where a
 * transaction took five. The row is locked before its previous status is read, so two transitions of one
 * campaign never both report the same `previous_status`. `by: "system"`: the service moves it (the dispatch
 * engine), and its audit entry is written by the same statement (a person's move is audited by their call).
 * Returns the updated row, or null when it was not in `from`.
 */
export async function transition(db: Db, campaignId: string, from: Status[], to: Status, at: Date, extra: TransitionExtra = {}, by?: "system") {
  const ctes = transitionCtes(db, campaignId, from, to, at, by);
  if (!ctes) return null;
  const { locked, recorded, audited } = ctes;
  const [row] = await db
    .with(locked, recorded, ...(audited ? [audited] : []))
    .update(campaigns)
    .set(transitionSet(to, at, extra))
    .where(sql`${campaigns.id} = (select ${lockedRow.col("id")} from ${lockedRow.name})`)
    .returning();
  if (!row) return null;
  eventsRecorded();
  return row;
}

/** What a transition may write besides the status (the pause reason only with `paused`). */
export interface TransitionExtra {
  pauseReason?: PauseReason;
  nextRunAt?: Date;
  finishedAt?: Date;
  queueReadyAt?: Date;
}

/**
 * The columns a move to `to` writes, one expression for transition() and for the claim that starts a campaign in
 * its own statement (claim-deliveries.ts, rendered by transitionSetSql): the status, the pause reason (kept only
 * with `paused`), `updated_at`, `last_progress_at` on a final status (its last campaign_progress goes with it),
 * `started_at` the first time it sends, and `extra`'s moments.
 */
export function transitionSet(to: Status, at: At, extra: TransitionExtra = {}) {
  const { pauseReason, ...moments } = extra;
  return {
    status: to,
    pauseReason: to === "paused" ? (pauseReason ?? "user") : null,
    updatedAt: tsParam(at),
    ...(isFinal(to) ? { lastProgressAt: tsParam(at) } : {}),
    ...(to === "sending" ? { startedAt: sql`coalesce(${campaigns.startedAt}, ${tsParam(at)})` } : {}),
    ...Object.fromEntries(Object.entries(moments).flatMap(([k, v]) => (v ? [[k, tsParam(v)]] : []))),
  } satisfies Partial<Record<keyof typeof campaigns.$inferSelect, unknown>>;
}

/** transitionSet as a SET list, for a raw UPDATE of the campaigns table. */
export function transitionSetSql(to: Status, at: At, extra: TransitionExtra = {}) {
  const columns = getTableColumns(campaigns) as Record<string, { name: string }>;
  return sql.join(
    Object.entries(transitionSet(to, at, extra)).map(([key, value]) => sql`${sql.identifier(columns[key].name)} = ${value}`),
    sql`, `,
  );
}

const isFinal = (to: Status) => to === "completed" || to === "failed" || to === "canceled";

/** The CTE `locked` of transitionCtes: the campaign row as a transition's events report it (its new status, the old beside it). */
export const lockedRow = relation("locked", ["id", "tenant_id", "name", "total", "sent", "failed", "status", "previous_status"]);

/**
 * A transition's first two parts, as CTEs: the campaign row locked (only in one of `from`) as the events
 * report it (lockedRow), and its events written. transition() updates the row from them; the claim of a
 * campaign's first loop does it in its own statement (statements/claim.ts); with `by: "system"`, a third writes
 * the audit log's entry (systemTransitionAuditSql). Null when no status of `from` may move to `to`.
 */
export function transitionCtes(db: Db, campaignId: Bind<string>, from: Status[], to: Status, at: At, by?: "system") {
  const sources = from.filter((s) => canTransition(s, to));
  if (sources.length === 0) return null;
  const final = isFinal(to);
  // The locked row as the events report it: the new status, the old one beside it.
  const locked = db.$with("locked", {}).as(
    sql`select id, tenant_id, name, total, sent, failed, ${to}::text as status, status::text as previous_status from ${campaigns}
        where id = ${campaignId} and ${inArray(campaigns.status, sources)} for update`,
  );
  const l = lockedRow;
  const events = [statusEventSql(l, l.name, at, l.col("previous_status")), ...(final ? [progressEventSql(l, l.name, at)] : [])];
  const recorded = db.$with("recorded", {}).as(insertEventsSql(events, at));
  const audited = by === "system" ? db.$with("audited", {}).as(systemTransitionAuditSql(to, at)) : undefined;
  return { locked, recorded, audited, final, sources };
}

/**
 * The service's audit entry of a transition (docs/team.md#audit-actions), from the `locked` row: one per transition,
 * never one per message. To `sending` it is the campaign's start (from `pending`) or its resume (from `paused`).
 */
function systemTransitionAuditSql(to: Status, at: At) {
  const l = lockedRow;
  const ended: Partial<Record<Status, string>> = {
    paused: "campaign.pause",
    completed: "campaign.complete",
    failed: "campaign.fail",
    canceled: "campaign.cancel",
  };
  const action =
    to === "sending" || to === "pending"
      ? sql`case when ${l.col("previous_status")} = 'pending' then 'campaign.start' else 'campaign.resume' end`
      : sql`${ended[to]}::text`;
  return sql`insert into ${auditLog} (at, tenant_id, actor_type, actor_label, action, target, outcome)
    select ${tsParam(at)}, ${l.col("tenant_id")}, 'system', 'service', ${action}, ${l.col("id")}, 'ok' from ${l.name}`;
}
