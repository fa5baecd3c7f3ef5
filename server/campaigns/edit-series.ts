import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaignSeries, type SeriesSchedule } from "../../db/schema";
import { Conflict } from "../errors";
import { firstRun, parseUntil } from "./create-series";
import { findSeries, seriesAnswer } from "./list-series";
import type { EditSeriesInput } from "./series-schema";

/**
 * edit-series (docs/series.md): pause, resume, a new name, text or schedule for future runs. Runs already created
 * are campaigns and keep what they had. Resuming, or a new schedule, sets the next run to the first one after
 * `now`: runs that fell due while paused are skipped, never caught up. A stopped series cannot change (409).
 */
export async function editSeries(db: Db, tenantId: string, input: EditSeriesInput, now: Date) {
  const current = await findSeries(db, tenantId, input.id_series);
  const s = current.series;
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
  // Active: the next run from now on (a new schedule, or a resume, never reaches back); paused: none.
  const rescheduled = updated.includes("status") || updated.some((f) => f.startsWith("repeat."));
  const nextRunAt = status === "paused" ? null : rescheduled ? firstRun(schedule, now, updated.includes("status") ? "status" : "repeat") : s.nextRunAt;
  const [row] = await db
    .update(campaignSeries)
    .set({ status, name, content, schedule, nextRunAt, updatedAt: now })
    .where(and(eq(campaignSeries.id, s.id), eq(campaignSeries.tenantId, tenantId)))
    .returning();
  return { series: seriesAnswer({ ...current, series: row }), updated };
}

/** delete-series: the series stops for good (no more runs); its runs stay campaigns (cancel-campaign stops one). */
export async function stopSeries(db: Db, tenantId: string, seriesId: string, now: Date) {
  const current = await findSeries(db, tenantId, seriesId);
  const [row] = await db
    .update(campaignSeries)
    .set({ status: "stopped", nextRunAt: null, updatedAt: now })
    .where(and(eq(campaignSeries.id, current.series.id), eq(campaignSeries.tenantId, tenantId)))
    .returning();
  return seriesAnswer({ ...current, series: row });
}
