import { and, count, eq, ne, sql } from "drizzle-orm";
import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import type { Db } from "../../db/client";
import { campaignSeries, channels, segmentChannels, segments, type SeriesSchedule, tenants } from "../../db/schema";
import { BadRequest, LimitReached } from "../errors";
import { newId } from "../ids";
import { segmentNotFound } from "../segments/find-segment";
import { brasiliaTimeZone, formatBrasilia } from "../time/brasilia";
import type { NewCampaign } from "./create-campaign";
import { scheduleNextRun } from "./run-due-series";
import { nextRun } from "./series-occurrences";
import type { Repeat } from "./series-schema";

export type NewSeries = Omit<NewCampaign, "scheduledAt"> & { repeat: Repeat };

/** `until` (DD/MM/YYYY) as a Brasília date YYYY-MM-DD, today or later; else a 400 naming the field. */
export function parseUntil(value: string, now: Date, field = "repeat.until"): string {
  const [dd, mm, yyyy] = value.split("/");
  const date = `${yyyy}-${mm}-${dd}`;
  const at = fromZonedTime(`${date}T12:00:00`, brasiliaTimeZone);
  if (Number.isNaN(at.getTime()) || formatBrasilia(at, "dd/MM/yyyy") !== value) {
    throw new BadRequest(`${field}: ${value} is not a valid date DD/MM/YYYY`);
  }
  if (date < formatBrasilia(now, "yyyy-MM-dd")) {
    throw new BadRequest(`${field}: must be today or later (Brasília date now: ${formatBrasilia(now, "dd/MM/yyyy")})`);
  }
  const latest = addYears(now, seriesMaxYearsAhead);
  if (date > formatBrasilia(latest, "yyyy-MM-dd")) {
    throw new BadRequest(`${field}: must be at most ${seriesMaxYearsAhead} years ahead (${formatBrasilia(latest, "dd/MM/yyyy")} at the latest)`);
  }
  return date;
}

/** How far ahead a series' `until` may be (docs/series.md#limits). */
export const seriesMaxYearsAhead = 2;
/** Series per account that are not stopped (active or paused; a stopped series never runs again): docs/series.md#limits. */
export const seriesPerAccount = 50;

function addYears(at: Date, years: number): Date {
  const d = new Date(at);
  d.setUTCFullYear(d.getUTCFullYear() + years);
  return d;
}

/** The schedule's first run after `now`, or a 400 naming `field` when none falls before `until`. */
export function firstRun(schedule: SeriesSchedule, now: Date, field = "repeat") {
  const at = nextRun(schedule, now);
  if (!at) throw new BadRequest(`${field}: no run falls between now and until (${schedule.until}); check days, time and until`);
  return at;
}

/**
 * A series (repeating campaign, docs/series.md): the template every run copies and its schedule, and, in the same
 * transaction, its first run as a scheduled campaign (scheduleNextRun); the periodic job
 * (inngest/jobs/series-runs.ts) makes each following run when the one before it starts. The segment must exist and
 * have a connected channel, as for a one-off campaign. The caller hands the run to the engine after the commit.
 */
export async function createSeries(db: Db, tenantId: string, input: NewSeries, now: Date) {
  const schedule: SeriesSchedule = { days: input.repeat.days, time: input.repeat.time, until: parseUntil(input.repeat.until, now) };
  const [segment] = await db
    .select({
      id: segments.id,
      connected: sql<boolean>`exists (select 1 from ${segmentChannels} sc join ${channels} ch on ch.id = sc.channel_id
                                      where sc.segment_id = "segments".id and ch.status = 'connected')`,
    })
    .from(segments)
    .where(and(eq(segments.id, input.segmentId), eq(segments.tenantId, tenantId)));
  if (!segment) throw segmentNotFound(input.segmentId);
  if (!segment.connected) throw new BadRequest(`id_segment: segment ${segment.id} has no connected channel`, "no_connected_channel");
  const nextRunAt = firstRun(schedule, now);
  return db.transaction(async (tx) => {
    // The account's row locked: two creations at once count each other's series (the cap holds under a race).
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).for("update");
    const [{ live }] = await tx
      .select({ live: count() })
      .from(campaignSeries)
      .where(and(eq(campaignSeries.tenantId, tenantId), ne(campaignSeries.status, "stopped")));
    if (live >= seriesPerAccount) {
      throw new LimitReached(
        `repeat: this account already has ${live} series that are not stopped (at most ${seriesPerAccount}); stop one with edit-series first.`,
        live,
        seriesPerAccount,
        "series_limit",
      );
    }
    const [row] = await tx
      .insert(campaignSeries)
      .values({
        id: newId("series"),
        tenantId,
        segmentId: segment.id,
        name: input.name,
        status: "active",
        messageType: input.messageType,
        content: input.content,
        linkPreview: input.linkPreview ?? null,
        mentionAll: input.mentionAll,
        schedule,
        nextRunAt,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const run = await scheduleNextRun(tx, row, now);
    if (!run) throw new Error(`series ${row.id}: its first run was not made`);
    return { series: { ...row, nextRunAt: run.at }, run };
  });
}
