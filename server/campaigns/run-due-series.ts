import { and, asc, eq, gte, isNull, lte, or, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { campaigns, campaignSeries, seriesRuns } from "../../db/schema";
import type { CampaignContent } from "../dispatch/campaign-content";
import { transition } from "../dispatch/transition";
import { notifyCampaignCanceled, wakeDispatch } from "../dispatch/wake";
import { BadRequest } from "../errors";
import { newId } from "../ids";
import { formatBrasilia } from "../time/brasilia";
import { createCampaign } from "./create-campaign";
import { nextRun } from "./series-occurrences";

type SeriesRow = typeof campaignSeries.$inferSelect;

/** Series looked at per pass; the next pass takes the rest. */
const batch = 100;

/** Series whose next run could not be made (no connected channel), warned once per process until it is made. */
const warned = new Set<string>();

export interface SeriesPass {
  /** Next runs this pass created (scheduled campaigns). */
  created: string[];
  /** Series whose next run could not be made now (the segment has no connected channel; retried each pass). */
  skipped: number;
}

/** The series row, locked until the transaction ends (edits and the job's passes over one series take turns). */
export async function lockSeries(tx: Tx, seriesId: string) {
  const [s] = await tx.select().from(campaignSeries).where(eq(campaignSeries.id, seriesId)).for("update");
  return s;
}

/**
 * The series' next run as a scheduled campaign (docs/series.md): the first occurrence strictly after `now` (those
 * already past are skipped, never caught up), its series_runs row inserted with `on conflict do nothing` (made once
 * whatever the number of processes) and the campaign created in the caller's transaction; the series' next_run_at
 * moves to it. Returns the campaign (null: no occurrence left before `until`, or that occurrence exists already).
 * A segment without a connected channel is a 400 (BadRequest) that rolls the caller's transaction back.
 */
export async function scheduleNextRun(tx: Tx, s: SeriesRow, now: Date): Promise<{ id: string; at: Date } | null> {
  const at = nextRun(s.schedule, now);
  await tx.update(campaignSeries).set({ nextRunAt: at, updatedAt: now }).where(eq(campaignSeries.id, s.id));
  if (!at) return null;
  const id = newId("campaign");
  const claimed = await tx.insert(seriesRuns).values({ seriesId: s.id, occurrenceAt: at, campaignId: id, createdAt: now }).onConflictDoNothing().returning();
  if (claimed.length === 0) return null;
  const run = {
    id,
    name: s.name,
    segmentId: s.segmentId,
    messageType: s.messageType,
    content: s.content as CampaignContent,
    linkPreview: s.linkPreview ?? undefined,
    mentionAll: s.mentionAll,
    run: { seriesId: s.id, at },
  };
  await createCampaign(tx, s.tenantId, run, now);
  return { id, at };
}

/**
 * The series' future run (the one at next_run_at) withdrawn: canceled when it has not started (a `canceled`
 * campaign, with its campaign_status event and webhook as any cancel), and its series_runs row deleted so the same
 * occurrence can be made again (a resume, a new schedule). A run that started stays as it is. Returns the canceled
 * campaign's id (notifyWithdrawn after the commit), or null.
 */
export async function withdrawFutureRun(tx: Tx, s: SeriesRow, now: Date): Promise<string | null> {
  if (!s.nextRunAt) return null;
  const [run] = await tx
    .select({ id: campaigns.id, status: campaigns.status, startedAt: campaigns.startedAt })
    .from(seriesRuns)
    .innerJoin(campaigns, eq(campaigns.id, seriesRuns.campaignId))
    .where(and(eq(seriesRuns.seriesId, s.id), eq(seriesRuns.occurrenceAt, s.nextRunAt)));
  if (!run || run.startedAt) return null;
  let canceled: string | null = null;
  if (run.status === "pending" || run.status === "paused") {
    const row = await transition(tx, run.id, ["pending", "paused"], "canceled", now, { finishedAt: now });
    if (row) canceled = run.id;
  }
  if (canceled || run.status === "canceled") {
    await tx.delete(seriesRuns).where(and(eq(seriesRuns.seriesId, s.id), eq(seriesRuns.occurrenceAt, s.nextRunAt)));
  }
  return canceled;
}

/** After the commit: the canceled run's listeners told, the created run handed to the dispatch engine. */
export function afterSeriesChange(tenantId: string, canceled: string | null, created: { id: string; at: Date } | null) {
  if (canceled) notifyCampaignCanceled(canceled);
  if (created) wakeDispatch(created.id, { tenantId, dueAt: created.at });
}

/**
 * The periodic pass over series (inngest/jobs/series-runs.ts; docs/series.md). A series always has its next run as a
 * scheduled campaign; once that run's time has come (it starts, or waits in the queue, as any scheduled campaign),
 * the pass counts it and creates the following one ahead of time — the first occurrence after now, so a server that
 * was down runs the run it had scheduled once and never catches up the occurrences it missed. A series left with no
 * next run (its creation failed: no connected channel) gets it on a later pass.
 */
export async function runDueSeries(db: Db, now: Date): Promise<SeriesPass> {
  const today = formatBrasilia(now, "yyyy-MM-dd");
  const due = await db
    .select({ id: campaignSeries.id })
    .from(campaignSeries)
    .where(
      and(
        eq(campaignSeries.status, "active"),
        or(lte(campaignSeries.nextRunAt, now), and(isNull(campaignSeries.nextRunAt), gte(sql`${campaignSeries.schedule}->>'until'`, today))),
      ),
    )
    .orderBy(asc(campaignSeries.nextRunAt))
    .limit(batch);
  const pass: SeriesPass = { created: [], skipped: 0 };
  for (const { id } of due) {
    // The run whose time came: counted, and the series left without a next run until the next step makes it.
    await db.transaction(async (tx) => {
      const s = await lockSeries(tx, id);
      if (s?.status !== "active" || !s.nextRunAt || s.nextRunAt > now) return;
      const started = await tx
        .select({ id: campaigns.id })
        .from(seriesRuns)
        .innerJoin(campaigns, eq(campaigns.id, seriesRuns.campaignId))
        .where(and(eq(seriesRuns.seriesId, s.id), eq(seriesRuns.occurrenceAt, s.nextRunAt), sql`${campaigns.status} <> 'canceled'`));
      await tx
        .update(campaignSeries)
        .set({
          nextRunAt: null,
          ...(started.length ? { lastRunAt: s.nextRunAt, runs: sql`${campaignSeries.runs} + 1` } : {}),
          updatedAt: now,
        })
        .where(eq(campaignSeries.id, s.id));
    });
    try {
      const made = await db.transaction(async (tx) => {
        const s = await lockSeries(tx, id);
        if (s?.status !== "active" || s.nextRunAt) return null;
        return { tenantId: s.tenantId, run: await scheduleNextRun(tx, s, now) };
      });
      warned.delete(id);
      if (made?.run) {
        pass.created.push(made.run.id);
        afterSeriesChange(made.tenantId, null, made.run);
      }
    } catch (err) {
      if (!(err instanceof BadRequest)) throw err;
      // The segment has no connected channel: retried on each pass (the occurrences that pass meanwhile are skipped).
      if (!warned.has(id)) console.warn(`[series] ${id}: next run not made yet: ${err.message}`);
      warned.add(id);
      pass.skipped++;
    }
  }
  return pass;
}
