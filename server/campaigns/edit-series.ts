import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { AuditWrite } from "../audit/audited";
import { campaigns, campaignSeries, type SeriesSchedule, seriesRuns } from "../../db/schema";
import { Conflict } from "../errors";
import { firstRun, parseUntil } from "./create-series";
import { findSeries, seriesAnswer } from "./list-series";
import { afterSeriesChange, lockSeries, scheduleNextRun, withdrawFutureRun } from "./run-due-series";
import type { EditSeriesInput } from "./series-schema";

/**
 * edit-series (docs/series.md): pause, resume, a new name, text or schedule. The series' future run (a scheduled
 * campaign that has not started) follows: pausing cancels it and resuming makes the next one after `now` (the
 * occurrences that passed while paused are skipped, never caught up); a new schedule cancels it and makes the new
 * schedule's next one; a new name or text changes it in place. Runs that started keep what they had. A stopped series
 * cannot change (409). One transaction, the series row locked (the job's passes wait for it).
 */
export async function editSeries(db: Db, tenantId: string, input: EditSeriesInput, now: Date, audit?: AuditWrite) {
  const current = await findSeries(db, tenantId, input.id_series);
  const changed = await db.transaction(async (tx) => {
    const s = await lockSeries(tx, current.series.id);
    if (s.status === "stopped") throw new Conflict(`Series ${s.id} is stopped; create a new one.`, "series_stopped");
    const updated: string[] = [];
    const schedule: SeriesSchedule = { ...s.schedule };
    if (input.repeat?.days) schedule.days = input.repeat.days;
    if (input.repeat?.time) schedule.time = input.repeat.time;
    if (input.repeat?.until) schedule.until = parseUntil(input.repeat.until, now);
    for (const k of ["days", "time", "until"] as const) {
      if (JSON.stringify(schedule[k]) !== JSON.stringify(s.schedule[k])) updated.push(`repeat.${k}`);
    }
    const status = input.status ?? s.status;
    if (status !== s.status) updated.push("status");
    const content = input.message !== undefined ? { ...(s.content as object), message: input.message } : s.content;
    if (input.message !== undefined && input.message !== (s.content as { message?: string }).message) updated.push("message");
    const name = input.name ?? s.name;
    if (name !== s.name) updated.push("name");
    const rescheduled = updated.includes("status") || updated.some((f) => f.startsWith("repeat."));
    // A new schedule or a resume must leave a run to make (400 naming the field otherwise).
    if (status === "active" && rescheduled) firstRun(schedule, now, updated.includes("status") ? "status" : "repeat");
    const [row] = await tx.update(campaignSeries).set({ status, name, content, schedule, updatedAt: now }).where(eq(campaignSeries.id, s.id)).returning();
    let canceled: string | null = null;
    let created: { id: string; at: Date } | null = null;
    if (rescheduled) {
      canceled = await withdrawFutureRun(tx, s, now);
      await tx.update(campaignSeries).set({ nextRunAt: null }).where(eq(campaignSeries.id, s.id));
      if (status === "active") created = await scheduleNextRun(tx, row, now);
    } else if (s.nextRunAt && (updated.includes("message") || updated.includes("name"))) {
      // The future run has not started: it sends the new text (a run that started keeps its own).
      const [run] = await tx
        .select({ id: seriesRuns.campaignId })
        .from(seriesRuns)
        .where(and(eq(seriesRuns.seriesId, s.id), eq(seriesRuns.occurrenceAt, s.nextRunAt)));
      if (run) {
        await tx
          .update(campaigns)
          .set({ name, content, updatedAt: now })
          .where(and(eq(campaigns.id, run.id), inArray(campaigns.status, ["pending", "paused"]), isNull(campaigns.startedAt)));
      }
    }
    if (updated.length > 0) await audit?.(tx, s.id);
    return { updated, canceled, created };
  });
  afterSeriesChange(tenantId, changed.canceled, changed.created);
  return { series: seriesAnswer(await findSeries(db, tenantId, current.series.id)), updated: changed.updated };
}

/** delete-series: the series stops for good; its future run is canceled; the runs that started stay campaigns. */
export async function stopSeries(db: Db, tenantId: string, seriesId: string, now: Date, audit?: AuditWrite) {
  const current = await findSeries(db, tenantId, seriesId);
  const canceled = await db.transaction(async (tx) => {
    const s = await lockSeries(tx, current.series.id);
    const withdrawn = await withdrawFutureRun(tx, s, now);
    await tx.update(campaignSeries).set({ status: "stopped", nextRunAt: null, updatedAt: now }).where(eq(campaignSeries.id, s.id));
    await audit?.(tx, s.id);
    return withdrawn;
  });
  afterSeriesChange(tenantId, canceled, null);
  return seriesAnswer(await findSeries(db, tenantId, seriesId));
}
