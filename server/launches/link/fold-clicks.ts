import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { deleteInBatches, maintenanceBatch } from "../../../db/batched-delete";
import { tsParam } from "../../../db/errors";
import { rowsOf } from "../../../db/params";
import { brasiliaParts } from "../../time/brasilia";

/**
 * The join link's clicks over time (docs/decisions.md#the-join-link-in-detail, "Clicks"): raw rows (launch_clicks) are kept
 * `clickRetentionDays`; each finished Brasília day is folded first into launch_click_days (clicks, distinct
 * visitors) and launch_click_day_counts (clicks per group and `utm_source`), so launch-analytics answers
 * 365 days and info-launch the launch's whole life after the raw rows are gone. Both run in the
 * maintenance job (server/maintenance/purge-expired.ts), fold before purge.
 */
export const clickRetentionDays = 90;

/** A folded day keeps its largest sources; the rest is kept as one "(outros)" row (an unbounded set of made-up sources stays bounded). */
export const sourcesKeptPerDay = 100;
export const otherSources = "(outros)";

const dayMs = 86_400_000;
const hourMs = 3_600_000;
const previousDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - dayMs).toISOString().slice(0, 10);

/**
 * The last day that may be folded: the last Brasília day that ended an hour or more ago. A click is
 * stored with the day of its visit a moment after it (group commit), so a day is left alone for that hour.
 */
export const lastFoldableDay = (now: Date) => previousDay(brasiliaParts(new Date(now.getTime() - hourMs)).date);

/**
 * Folds each launch's raw clicks of the days after its `clicks_folded_through` up to `lastFoldableDay`,
 * one launch per statement: the move of `clicks_folded_through` (compare-and-set, so two processes' jobs
 * fold a day once) and the fold's rows commit together, and the readers (server/launches/funnel/click-figures.ts)
 * take days up to it from the fold and later days from the raw rows. Returns how many launch-days it folded.
 */
export async function foldLaunchClicks(db: Db, now: Date, batch = 100): Promise<number> {
  const through = lastFoldableDay(now);
  let folded = 0;
  for (;;) {
    const candidates = rowsOf<{ id: string; folded_through: string | null }>(
      await db.execute(sql`select l.id, l.clicks_folded_through as folded_through from launches l
        where exists (select 1 from launch_clicks c where c.launch_id = l.id
          and c.day > coalesce(l.clicks_folded_through, '') and c.day <= ${through})
        order by l.id limit ${batch}`),
    );
    for (const c of candidates) folded += await foldLaunch(db, c.id, c.folded_through, through);
    if (candidates.length < batch) return folded;
  }
}

async function foldLaunch(db: Db, launchId: string, from: string | null, through: string): Promise<number> {
  const [row] = rowsOf<{ days: number }>(
    await db.execute(sql`
      with claim as (
        update launches set clicks_folded_through = ${through}
        where id = ${launchId} and clicks_folded_through is not distinct from ${from}::text
        returning id
      ),
      raw as (
        select c.day, c.position, c.utm_source, c.visitor from launch_clicks c join claim on c.launch_id = claim.id
        where c.day > coalesce(${from}::text, '') and c.day <= ${through}
      ),
      days as (
        insert into launch_click_days (launch_id, day, clicks, unique_clicks)
        select ${launchId}, day, count(*)::int, count(distinct visitor)::int from raw group by day
        returning day
      ),
      agg as (select day, position, utm_source, count(*)::int as n from raw group by day, position, utm_source),
      -- Each source's rank in its day (dense_rank over its day total, then its name: one rank per source).
      ranked as (
        select day, position, utm_source, n, dense_rank() over (partition by day order by source_clicks desc, utm_source asc nulls last) as rk
        from (select agg.*, sum(n) over (partition by day, utm_source) as source_clicks from agg) a
      ),
      counts as (
        insert into launch_click_day_counts (launch_id, day, position, utm_source, clicks)
        select ${launchId}, day, position, case when rk > ${sourcesKeptPerDay} then ${otherSources} else utm_source end, sum(n)::int
        from ranked group by day, position, 4
      )
      select count(*)::int as days from days`),
  );
  return Number(row?.days ?? 0);
}

/**
 * Deletes raw clicks older than `clickRetentionDays` whose day is folded (a day not folded yet is kept,
 * whatever its age: its figures exist nowhere else), in batches.
 */
export async function purgeLaunchClicks(db: Db, now: Date, batch = maintenanceBatch): Promise<number> {
  const cutoff = tsParam(new Date(now.getTime() - clickRetentionDays * dayMs));
  return deleteInBatches(
    db,
    (n) => sql`delete from launch_clicks where id in (
      select c.id from launch_clicks c join launches l on l.id = c.launch_id
      where c.at < ${cutoff} and c.day <= l.clicks_folded_through limit ${n})`,
    batch,
  );
}
