/**
 * launch-analytics (docs/decisions.md#launch-endpoints): per Brasília day, clicks and distinct visitors,
 * joins and leaves of leads, and everyone in the launch's groups at the end of the day; clicks by
 * `utm_source`; the groups with the period's clicks, joins and leaves. A day's `members` is counted back
 * from now: today's end is the groups' `members`, and each earlier day's is the next one's minus what
 * joined and plus what left that next day (staff included, as `members` is), and 0 before the launch's creation day
 * (the launch had no groups then; the dashboard's charts start on that day). Click figures come from the
 * fold for old days and from the raw clicks for recent ones (server/launches/funnel/click-figures.ts), so 365 days
 * are answered after the raw rows' 90 days; `by_source` is the 20 largest sources and "(outros)",
 * `by_source_day` the same sources per day, `by_utm` the 50 largest UTM combinations (server/launches/funnel/utm-figures.ts).
 * Buyers (server/launches/funnel/buyer-figures.ts): distinct people of the launch with a purchase approved that day and
 * never refunded; a group's buyers are the period's buyers who ever joined it ("which group converted").
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { rowsOf } from "../../../db/params";
import { launchGroups, launchParticipants } from "../../../db/schema";
import { brasiliaParts } from "../../time/brasilia";
import { anyPurchases, buyerKeys, launchPurchases, participantKey, purchaseDay } from "./buyer-figures";
import { clickFigures } from "./click-figures";
import { findOwnedLaunch } from "../launch/find-launch-owned";
import { utmFigures } from "./utm-figures";
import type { LaunchAnalytics } from "./stats-schema";

/** The Brasília day of a timestamp column, YYYY-MM-DD. */
const brasiliaDay = (column: typeof launchParticipants.joinedAt | typeof launchParticipants.leftAt) =>
  sql<string>`to_char(${column} at time zone 'America/Sao_Paulo', 'YYYY-MM-DD')`;

/** The `n` days ending today (Brasília), oldest first. */
export function lastDays(now: Date, n: number): string[] {
  const today = Date.parse(`${brasiliaParts(now).date}T00:00:00Z`);
  return Array.from({ length: n }, (_, i) => new Date(today - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

export async function launchAnalytics(db: Db, tenantId: string, launchId: string, dayCount: number, now: Date): Promise<LaunchAnalytics> {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  const scope = { tenantId, launchId, channelIds: launch.channelIds, createdAt: launch.createdAt };
  const dates = lastDays(now, dayCount);
  const first = dates[0];
  const joinDay = brasiliaDay(launchParticipants.joinedAt);
  const leaveDay = brasiliaDay(launchParticipants.leftAt);
  const ofLaunch = eq(launchParticipants.launchId, launchId);

  const [clickFigs, byUtm, joinsByDay, leavesByDay, groups, joinsByGroup, leavesByGroup, buyerFigs] = await Promise.all([
    clickFigures(db, launchId, first),
    utmFigures(db, launchId, first, now),
    db
      .select({ day: joinDay, leads: sql<number>`count(*) filter (where not ${launchParticipants.staff})`.mapWith(Number), all: count() })
      .from(launchParticipants)
      .where(and(ofLaunch, sql`${joinDay} >= ${first}`))
      .groupBy(joinDay),
    db
      .select({ day: leaveDay, leads: sql<number>`count(*) filter (where not ${launchParticipants.staff})`.mapWith(Number), all: count() })
      .from(launchParticipants)
      .where(and(ofLaunch, sql`${launchParticipants.leftAt} is not null`, sql`${leaveDay} >= ${first}`))
      .groupBy(leaveDay),
    db.select().from(launchGroups).where(eq(launchGroups.launchId, launchId)).orderBy(asc(launchGroups.position)),
    db
      .select({ groupId: launchParticipants.groupId, n: count() })
      .from(launchParticipants)
      .where(and(ofLaunch, eq(launchParticipants.staff, false), sql`${joinDay} >= ${first}`))
      .groupBy(launchParticipants.groupId),
    db
      .select({ groupId: launchParticipants.groupId, n: count() })
      .from(launchParticipants)
      .where(and(ofLaunch, eq(launchParticipants.staff, false), sql`${launchParticipants.leftAt} is not null`, sql`${leaveDay} >= ${first}`))
      .groupBy(launchParticipants.groupId),
    buyerFigures(db, scope, first),
  ]);

  const byDay = <T extends { day: string | null }>(rows: T[]) => new Map(rows.map((r) => [r.day ?? "", r]));
  const clicks = clickFigs.byDay;
  const joins = byDay(joinsByDay);
  const leaves = byDay(leavesByDay);
  let members = groups.reduce((sum, g) => sum + g.members, 0);
  // Counted back from now, an adopted group's members would be drawn on days before the launch existed.
  const createdDay = brasiliaParts(launch.createdAt).date;
  const days: LaunchAnalytics["days"] = [];
  for (let i = dates.length - 1; i >= 0; i--) {
    const date = dates[i];
    days.unshift({
      date,
      clicks: clicks.get(date)?.clicks ?? 0,
      unique_clicks: clicks.get(date)?.unique ?? 0,
      joins: joins.get(date)?.leads ?? 0,
      leaves: leaves.get(date)?.leads ?? 0,
      members: date < createdDay ? 0 : Math.max(0, members),
      buyers: buyerFigs.byDay.get(date) ?? 0,
    });
    members = members - (joins.get(date)?.all ?? 0) + (leaves.get(date)?.all ?? 0);
  }
  const perPosition = clickFigs.byPosition;
  const joinsOf = new Map(joinsByGroup.map((r) => [r.groupId, r.n]));
  const leavesOf = new Map(leavesByGroup.map((r) => [r.groupId, r.n]));
  return {
    success: true,
    id_launch: launchId,
    buyers: buyerFigs.total,
    days,
    by_source: clickFigs.bySource,
    by_source_day: clickFigs.bySourceDay,
    by_utm: byUtm,
    groups: groups.map((g) => ({
      id_group: g.groupId,
      name: g.name,
      clicks: perPosition.get(g.position) ?? 0,
      joins: joinsOf.get(g.groupId) ?? 0,
      leaves: leavesOf.get(g.groupId) ?? 0,
      members: g.members,
      buyers: buyerFigs.byGroup.get(g.groupId) ?? 0,
    })),
  };
}

/** The period's buyers: distinct in all, per day of their purchase, and per group they ever joined. */
async function buyerFigures(db: Db, scope: Parameters<typeof buyerKeys>[0], first: string) {
  if (!(await anyPurchases(db, scope.tenantId))) return { total: 0, byDay: new Map<string, number>(), byGroup: new Map<string, number>() };
  const [total, perDay, perGroup] = await Promise.all([
    db.execute(sql`select count(distinct b.match_key)::int as n from (${launchPurchases(scope, first)}) b`),
    db.execute(sql`select ${purchaseDay} as day, count(distinct pu.match_key)::int as n from (${launchPurchases(scope, first)}) pu group by 1`),
    db.execute(sql`select x.id_group, count(distinct x.k)::int as n from (
        select p.id_group, ${participantKey(scope.channelIds)} as k from launch_participants p where p.launch_id = ${scope.launchId}) x
      where x.k in (${buyerKeys(scope, first)}) group by x.id_group`),
  ]);
  return {
    total: Number(rowsOf<{ n: number }>(total)[0]?.n ?? 0),
    byDay: new Map(rowsOf<{ day: string; n: number }>(perDay).map((r) => [r.day, Number(r.n)])),
    byGroup: new Map(rowsOf<{ id_group: string; n: number }>(perGroup).map((r) => [r.id_group, Number(r.n)])),
  };
}
