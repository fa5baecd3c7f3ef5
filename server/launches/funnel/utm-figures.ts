import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { rowsOf } from "../../../db/params";
import { clickRetentionDays, otherSources } from "../link/fold-clicks";

/** by_utm lists this many source/medium/campaign/content combinations; the rest are one "(outros)" row. */
export const byUtmLimit = 50;

export interface UtmRow {
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  clicks: number;
  unique_clicks: number;
}

/**
 * A launch's clicks per UTM combination (source, medium, campaign, content) from the days from `first` on, read
 * from the raw clicks (docs/decisions.md#launches, "Every UTM"): the fold keeps only `utm_source`, so days
 * older than the raw rows' 90 days are not in it. `unique_clicks` is distinct visitors per day, summed over
 * the days (as the launch's own unique_clicks). The `byUtmLimit` largest, most first (ties by the tags), then
 * one row with every tag "(outros)" for the rest when there is any.
 */
export async function utmFigures(db: Db, launchId: string, first: string, now: Date): Promise<UtmRow[]> {
  const oldest = new Date(now.getTime() - clickRetentionDays * 86_400_000).toISOString().slice(0, 10);
  const from = first > oldest ? first : oldest;
  const result = await db.execute(sql`
    with combo as (
      select utm_source, utm_medium, utm_campaign, utm_content, count(*)::int as clicks,
        count(distinct (day, visitor))::int as unique_clicks
      from launch_clicks where launch_id = ${launchId} and day >= ${from}
      group by utm_source, utm_medium, utm_campaign, utm_content
    ),
    ranked as (
      select *, row_number() over (order by clicks desc, utm_source asc nulls last, utm_medium asc nulls last,
        utm_campaign asc nulls last, utm_content asc nulls last) as rk
      from combo
    )
    select utm_source, utm_medium, utm_campaign, utm_content, clicks, unique_clicks, rk from ranked where rk <= ${byUtmLimit}
    union all
    select ${otherSources}::text, ${otherSources}::text, ${otherSources}::text, ${otherSources}::text,
      sum(clicks)::int, sum(unique_clicks)::int, ${byUtmLimit + 1}::bigint
    from ranked where rk > ${byUtmLimit} having count(*) > 0
    order by rk`);
  return rowsOf<UtmRow>(result).map((r) => ({
    utm_source: r.utm_source,
    utm_medium: r.utm_medium,
    utm_campaign: r.utm_campaign,
    utm_content: r.utm_content,
    clicks: Number(r.clicks),
    unique_clicks: Number(r.unique_clicks),
  }));
}
