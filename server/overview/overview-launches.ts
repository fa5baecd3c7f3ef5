import { and, desc, eq, gt, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launches } from "../../db/schema";
import { launchAnalytics } from "../launches/funnel/launch-analytics";
import { activeTrafficAlert, trafficAlertPeriodMs } from "../launches/funnel/traffic-alerts";
import { toBrasiliaIso } from "../time/brasilia";
import { overviewListLimit } from "./overview-campaigns";
import type { Overview, OverviewAttention } from "./schema";

/** The launches not closed, newest first: today's clicks and joins, members, and the last 7 days for a small chart. */
export async function overviewLaunches(db: Db, tenantId: string, now: Date): Promise<Overview["launches"]> {
  const rows = await db
    .select()
    .from(launches)
    .where(and(eq(launches.tenantId, tenantId), ne(launches.status, "closed")))
    .orderBy(desc(launches.createdAt))
    .limit(overviewListLimit);
  return Promise.all(
    rows.map(async (l) => {
      const a = await launchAnalytics(db, tenantId, l.id, 7, now);
      const today = a.days[a.days.length - 1];
      return {
        id_launch: l.id,
        name: l.name,
        status: l.status,
        clicks_today: today?.clicks ?? 0,
        joins_today: today?.joins ?? 0,
        members: a.groups.reduce((sum, g) => sum + g.members, 0),
        groups: a.groups.length,
        days: a.days.map((d) => ({ date: d.date, clicks: d.clicks, joins: d.joins })),
      };
    }),
  );
}

/** "Needs attention": the launches whose traffic alert is on (server/launches/funnel/traffic-alerts.ts, the launch page's banner). */
export async function launchesAlerting(db: Db, tenantId: string, now: Date): Promise<OverviewAttention[]> {
  const rows = await db
    .select()
    .from(launches)
    .where(and(eq(launches.tenantId, tenantId), ne(launches.status, "closed"), gt(launches.lastAlertAt, new Date(now.getTime() - trafficAlertPeriodMs))))
    .orderBy(desc(launches.lastAlertAt))
    .limit(overviewListLimit);
  const lines = await Promise.all(
    rows.map(async (l): Promise<OverviewAttention | null> => {
      const alert = await activeTrafficAlert(db, l, now);
      if (!alert) return null;
      const detail = `${alert.clicks} cliques em ${alert.minutes} min`;
      return { kind: "traffic_alert", id: l.id, name: l.name, state: alert.reason, detail, count: alert.clicks, since: toBrasiliaIso(alert.at) };
    }),
  );
  return lines.filter((a) => a !== null);
}
