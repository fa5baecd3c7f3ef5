/**
 * Traffic alerts (docs/launches.md#traffic-alerts, docs/decisions.md#launches "Traffic alerts"): a launch whose
 * link got `alert_min_clicks` counted clicks in the last `alert_minutes` and not one join of a lead in that
 * window sends a `group_activity` `traffic_alert` (a dead or full invite, a broken ad), at most once an hour.
 * Checked by the launches' periodic pass (server/launches/funnel/funnel-jobs.ts), never by the link: a visit costs no
 * extra statement, and the check sees the joins the platform reported meanwhile.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { rowsOf } from "../../../db/params";
import { recordGroupActivity } from "../../groups/activity/group-activity";

/** At most one traffic_alert per launch in this long. */
export const trafficAlertPeriodMs = 3_600_000;
/** The longest window a launch may set (a day): the check reads clicks through launch_clicks' `at` index. */
export const maxAlertMinutes = 1440;

interface Candidate {
  id: string;
  tenant_id: string;
  minutes: number;
  clicks: number;
  id_group: string | null;
}

/**
 * One pass: finds the launches due an alert, then sends each one's in the transaction of the conditional
 * UPDATE of its `last_alert_at` (two processes' passes send it once). Returns the alerts sent.
 */
export async function checkTrafficAlerts(db: Db, now: Date): Promise<number> {
  const at = tsParam(now);
  const since = tsParam(new Date(now.getTime() - maxAlertMinutes * 60_000));
  const due = tsParam(new Date(now.getTime() - trafficAlertPeriodMs));
  const candidates = rowsOf<Candidate>(
    await db.execute(sql`
      select l.id, l.tenant_id, l.alert_minutes as minutes, count(c.id)::int as clicks,
        (select g.id_group from launch_groups g where g.launch_id = l.id and g.status = 'filling' order by g.position limit 1) as id_group
      from launches l
      join launch_clicks c on c.launch_id = l.id and c.at >= ${since}
        and c.at > ${at} - make_interval(mins => l.alert_minutes)
      where l.status = 'active' and l.alert_minutes > 0
        and (l.last_alert_at is null or l.last_alert_at <= ${due})
        and not exists (select 1 from launch_participants p where p.launch_id = l.id and not p.staff
          and p.joined_at > ${at} - make_interval(mins => l.alert_minutes))
      group by l.id
      having count(c.id) >= l.alert_min_clicks
      order by l.id
      limit 1000`),
  );
  let sent = 0;
  for (const c of candidates) {
    const clicks = Number(c.clicks);
    const minutes = Number(c.minutes);
    const claimed = await db.transaction(async (tx) => {
      const won = rowsOf<{ id: string }>(
        await tx.execute(sql`update launches set last_alert_at = ${at}, last_alert_clicks = ${clicks}
          where id = ${c.id} and (last_alert_at is null or last_alert_at <= ${due}) returning id`),
      );
      if (won.length === 0) return false;
      await recordGroupActivity(
        tx,
        c.tenant_id,
        { event: "traffic_alert", id_launch: c.id, reason: "clicks_without_joins", clicks, minutes, id_group: c.id_group },
        now,
      );
      return true;
    });
    if (claimed) sent++;
  }
  return sent;
}

export interface ActiveTrafficAlert {
  reason: "clicks_without_joins";
  clicks: number;
  minutes: number;
  at: Date;
}

/**
 * The dashboard's banner: the launch's latest alert while it is less than an hour old and no lead joined
 * since it was sent.
 */
export async function activeTrafficAlert(
  db: Db,
  launch: { id: string; alertMinutes: number; lastAlertAt: Date | null; lastAlertClicks: number | null },
  now: Date,
): Promise<ActiveTrafficAlert | null> {
  const at = launch.lastAlertAt;
  if (!at || now.getTime() - at.getTime() >= trafficAlertPeriodMs) return null;
  const [joined] = rowsOf<{ n: number }>(
    await db.execute(sql`select count(*)::int as n from launch_participants
      where launch_id = ${launch.id} and not staff and joined_at > ${tsParam(at)}`),
  );
  if (Number(joined?.n ?? 0) > 0) return null;
  return { reason: "clicks_without_joins", clicks: launch.lastAlertClicks ?? 0, minutes: launch.alertMinutes, at };
}
