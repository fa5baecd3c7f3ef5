import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaignSeries, seriesRuns } from "../../db/schema";
import type { CampaignContent } from "../dispatch/campaign-content";
import { BadRequest } from "../errors";
import { newId } from "../ids";
import { createCampaign } from "./create-campaign";
import { latestRunDue, nextRun } from "./series-occurrences";

type SeriesRow = typeof campaignSeries.$inferSelect;

/** Series looked at per pass; the next pass takes the rest. */
const batch = 100;

export interface SeriesPass {
  /** Runs this pass created (campaigns). */
  created: string[];
  /** Runs not made: the segment had no connected channel at their time (logged). */
  skipped: number;
}

/**
 * The periodic pass over series (inngest/jobs/series-runs.ts; docs/series.md): each active series whose next run is
 * due gets ONE campaign, for the latest of its runs due by `now` (a server that was down owes one run on its return,
 * never a catch-up of every run it missed), and its next run moves to the first one after `now`. The run's row
 * (primary key: series, occurrence) is inserted with `on conflict do nothing` in the transaction that creates the
 * campaign, so two processes, or two passes, make a run once.
 */
export async function runDueSeries(db: Db, now: Date): Promise<SeriesPass> {
  const due = await db
    .select()
    .from(campaignSeries)
    .where(and(eq(campaignSeries.status, "active"), lte(campaignSeries.nextRunAt, now)))
    .orderBy(asc(campaignSeries.nextRunAt))
    .limit(batch);
  const pass: SeriesPass = { created: [], skipped: 0 };
  for (const s of due) {
    const dueAt = s.nextRunAt as Date;
    const at = latestRunDue(s.schedule, new Date(dueAt.getTime() - 1), now) ?? dueAt;
    try {
      const campaignId = await createRun(db, s, at, now);
      if (campaignId) pass.created.push(campaignId);
    } catch (err) {
      if (!(err instanceof BadRequest)) throw err;
      // The segment lost its channels: this run is skipped (as a paused series' would be); the next one is kept.
      console.warn(`[series] ${s.id}: run of ${at.toISOString()} skipped: ${err.message}`);
      pass.skipped++;
    }
    await db
      .update(campaignSeries)
      .set({ nextRunAt: nextRun(s.schedule, now), updatedAt: now })
      .where(and(eq(campaignSeries.id, s.id), eq(campaignSeries.status, "active"), eq(campaignSeries.nextRunAt, dueAt)));
  }
  return pass;
}

/** The run's campaign, made once: null when another process (or pass) made it already. */
async function createRun(db: Db, s: SeriesRow, at: Date, now: Date): Promise<string | null> {
  return db.transaction(async (tx) => {
    const campaignId = newId("campaign");
    const claimed = await tx
      .insert(seriesRuns)
      .values({ seriesId: s.id, occurrenceAt: at, campaignId, createdAt: now })
      .onConflictDoNothing()
      .returning({ campaignId: seriesRuns.campaignId });
    if (claimed.length === 0) return null;
    await createCampaign(
      tx,
      s.tenantId,
      {
        id: campaignId,
        name: s.name,
        segmentId: s.segmentId,
        messageType: s.messageType,
        content: s.content as CampaignContent,
        linkPreview: s.linkPreview ?? undefined,
        mentionAll: s.mentionAll,
        run: { seriesId: s.id, at },
      },
      now,
    );
    await tx
      .update(campaignSeries)
      .set({ lastRunAt: at, runs: sql`${campaignSeries.runs} + 1`, updatedAt: now })
      .where(eq(campaignSeries.id, s.id));
    return campaignId;
  });
}
