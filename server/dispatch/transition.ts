import { inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { At, Bind } from "../../db/params";
import { campaigns } from "../../db/schema";
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
 * campaign never both report the same `previous_status`. Returns the updated row, or null when it was not in `from`.
 */
export async function transition(
  db: Db,
  campaignId: string,
  from: Status[],
  to: Status,
  at: Date,
  extra: { pauseReason?: PauseReason; nextRunAt?: Date; finishedAt?: Date; startedAt?: Date; queueReadyAt?: Date } = {},
) {
  const ctes = transitionCtes(db, campaignId, from, to, at);
  if (!ctes) return null;
  const { locked, recorded, final } = ctes;
  const [row] = await db
    .with(locked, recorded)
    .update(campaigns)
    .set({
      status: to,
      pauseReason: to === "paused" ? (extra.pauseReason ?? "user") : null,
      updatedAt: at,
      ...(final ? { lastProgressAt: at } : {}),
      ...withoutPause(extra),
    })
    .where(sql`${campaigns.id} = (select id from locked)`)
    .returning();
  if (!row) return null;
  eventsRecorded();
  return row;
}

/**
 * A transition's first two parts, as CTEs: the campaign row locked (only in one of `from`) as the events
 * report it, and its events written. transition() updates the row from them; the claim of a campaign's
 * first loop does it in its own statement (claimDeliveries' `start`). Null when no status of `from` may
 * move to `to`.
 */
export function transitionCtes(db: Db, campaignId: Bind<string>, from: Status[], to: Status, at: At) {
  const sources = from.filter((s) => canTransition(s, to));
  if (sources.length === 0) return null;
  const final = to === "completed" || to === "failed" || to === "canceled";
  // The locked row as the events report it: the new status, the old one beside it.
  const locked = db.$with("locked", {}).as(
    sql`select id, tenant_id, name, total, sent, failed, ${to}::text as status, status::text as previous_status from ${campaigns}
        where id = ${campaignId} and ${inArray(campaigns.status, sources)} for update`,
  );
  const events = [statusEventSql("l", sql`locked l`, at), ...(final ? [progressEventSql("l", sql`locked l`, at)] : [])];
  const recorded = db.$with("recorded", {}).as(insertEventsSql(events, at));
  return { locked, recorded, final, sources };
}

function withoutPause<T extends { pauseReason?: unknown }>(extra: T): Omit<T, "pauseReason"> {
  const { pauseReason: _ignored, ...rest } = extra;
  return rest;
}
