import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { rowsOf } from "../../../db/params";
import { otherSources } from "../link/fold-clicks";

/**
 * A launch's click figures from its two stores (server/launches/link/fold-clicks.ts): days up to the launch's
 * `clicks_folded_through` from the fold, later days from launch_clicks. The boundary is read once, so
 * every figure of one answer splits the days at the same place even if a fold commits meanwhile (the raw
 * rows of a folded day stay 90 days: a boundary a moment old still reads them).
 */
export interface ClickFigures {
  /** Per day: clicks and distinct visitors. */
  byDay: Map<string, { clicks: number; unique: number }>;
  /** The `bySourceLimit` largest sources, most first, then "(outros)" for the rest when there is any. */
  bySource: { utm_source: string | null; clicks: number }[];
  /** Per group position. */
  byPosition: Map<number | null, number>;
  /** Per day and `utm_source`, the sources outside `bySource` as "(outros)"; days in order. */
  bySourceDay: { date: string; utm_source: string | null; clicks: number }[];
}

/** by_source lists this many sources; the rest of the clicks are one `utm_source: "(outros)"` row. */
export const bySourceLimit = 20;

async function foldedThrough(db: Db, launchId: string): Promise<string> {
  const [row] = rowsOf<{ through: string | null }>(await db.execute(sql`select clicks_folded_through as through from launches where id = ${launchId}`));
  // '' sorts before every day: nothing folded.
  return row?.through ?? "";
}

/** The figures of the days from `first` (YYYY-MM-DD) on. */
export async function clickFigures(db: Db, launchId: string, first: string): Promise<ClickFigures> {
  const through = await foldedThrough(db, launchId);
  const folded = sql`launch_id = ${launchId} and day >= ${first} and day <= ${through}`;
  const raw = sql`launch_id = ${launchId} and day >= ${first} and day > ${through}`;
  const [days, sources, positions, sourceDays] = await Promise.all([
    db.execute(sql`
      select day, clicks, unique_clicks from launch_click_days where ${folded}
      union all
      select day, count(*)::int, count(distinct visitor)::int from launch_clicks where ${raw} group by day`),
    // A stored "(outros)" (a visitor's own utm_source, or a folded day's rest) joins the rest's row.
    db.execute(sql`
      with source as (
        select utm_source, sum(n)::int as clicks from (
          select utm_source, clicks as n from launch_click_day_counts where ${folded}
          union all
          select utm_source, count(*)::int from launch_clicks where ${raw} group by utm_source
        ) s group by utm_source
      ),
      ranked as (
        select utm_source, clicks, row_number() over (order by clicks desc, utm_source asc nulls last) as rk
        from source where utm_source is distinct from ${otherSources}::text
      )
      select utm_source, clicks, rk from ranked where rk <= ${bySourceLimit}
      union all
      select ${otherSources}::text, sum(clicks)::int, ${bySourceLimit + 1}::bigint from (
        select clicks from ranked where rk > ${bySourceLimit}
        union all
        select clicks from source where utm_source = ${otherSources}::text
      ) rest having count(*) > 0
      order by rk`),
    db.execute(sql`
      select position, sum(n)::int as clicks from (
        select position, clicks as n from launch_click_day_counts where ${folded}
        union all
        select position, count(*)::int from launch_clicks where ${raw} group by position
      ) p group by position`),
    db.execute(sql`
      select day, utm_source, sum(n)::int as clicks from (
        select day, utm_source, clicks as n from launch_click_day_counts where ${folded}
        union all
        select day, utm_source, count(*)::int from launch_clicks where ${raw} group by day, utm_source
      ) d group by day, utm_source order by day`),
  ]);
  const bySource = rowsOf<{ utm_source: string | null; clicks: number }>(sources).map((r) => ({ utm_source: r.utm_source, clicks: Number(r.clicks) }));
  const listed = new Set(bySource.map((r) => r.utm_source));
  const bySourceDay = new Map<string, { date: string; utm_source: string | null; clicks: number }>();
  for (const r of rowsOf<{ day: string; utm_source: string | null; clicks: number }>(sourceDays)) {
    const source = listed.has(r.utm_source) ? r.utm_source : otherSources;
    const key = `${r.day}\n${source}`;
    const row = bySourceDay.get(key) ?? { date: r.day, utm_source: source, clicks: 0 };
    row.clicks += Number(r.clicks);
    bySourceDay.set(key, row);
  }
  return {
    byDay: new Map(
      rowsOf<{ day: string; clicks: number; unique_clicks: number }>(days).map((r) => [r.day, { clicks: Number(r.clicks), unique: Number(r.unique_clicks) }]),
    ),
    bySource,
    byPosition: new Map(rowsOf<{ position: number | null; clicks: number }>(positions).map((r) => [r.position, Number(r.clicks)])),
    bySourceDay: [...bySourceDay.values()],
  };
}

/** A launch's clicks and distinct visitors per day, summed over its whole life (info-launch's totals). */
export async function clickTotals(db: Db, launchId: string): Promise<{ clicks: number; unique: number }> {
  const through = await foldedThrough(db, launchId);
  const [row] = rowsOf<{ clicks: number; unique_clicks: number }>(
    await db.execute(sql`
      select coalesce(sum(clicks), 0)::int as clicks, coalesce(sum(unique_clicks), 0)::int as unique_clicks from (
        select clicks, unique_clicks from launch_click_days where launch_id = ${launchId} and day <= ${through}
        union all
        select count(*)::int, count(distinct visitor)::int from launch_clicks where launch_id = ${launchId} and day > ${through} group by day
      ) d`),
  );
  return { clicks: Number(row?.clicks ?? 0), unique: Number(row?.unique_clicks ?? 0) };
}
