import { and, asc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import { rowsOf } from "../../db/params";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";

const active = or(
  inArray(campaigns.status, ["pending", "sending"]),
  and(eq(campaigns.status, "paused"), inArray(campaigns.pauseReason, ["schedule", "channel_offline"])),
);

/**
 * Campaigns whose next step is due and that no worker holds, taken round-robin across tenants
 * (docs/decisions.md#limits-abuse-retention, "Fairness"): each tenant's longest-waiting campaign first, then each tenant's second,
 * and so on; within a turn, the longest-waiting first. A tenant with many campaigns (or one that is
 * always due, at zero pacing) cannot push another tenant's campaign out of the first `limit`. Every
 * engine takes its work here: the in-process runner, the Inngest engine's wake-up and its sweep.
 */
export async function dueCampaigns(db: Db, now: Date, limit: number) {
  return (await dueCampaignRows(db, now, limit)).map((r) => r.id);
}

/** dueCampaigns with each campaign's tenant (the in-process pool spreads its workers across tenants). */
export function dueCampaignRows(db: Db, now: Date, limit: number) {
  const ranked = db
    .select({
      id: campaigns.id,
      tenantId: campaigns.tenantId,
      nextRunAt: campaigns.nextRunAt,
      turn: sql<number>`row_number() over (partition by ${campaigns.tenantId} order by ${campaigns.nextRunAt}, ${campaigns.id})`.as("turn"),
    })
    .from(campaigns)
    .where(and(active, lte(campaigns.nextRunAt, now), or(isNull(campaigns.leaseUntil), lt(campaigns.leaseUntil, now))))
    .as("ranked");
  return db.select({ id: ranked.id, tenantId: ranked.tenantId }).from(ranked).orderBy(asc(ranked.turn), asc(ranked.nextRunAt), asc(ranked.id)).limit(limit);
}

/**
 * One look for the in-process runner, in one statement: the due campaigns (as dueCampaignRows, at most
 * `limit`) and the ones falling due after `now` up to `until` (at most `upcomingLimit`, earliest first),
 * each with that time. A campaign that a worker holds falls due when its lease ends, not before: a runner
 * beside another process's long step waits instead of asking again at once.
 */
export async function dueWork(
  db: Db,
  now: Date,
  limit: number,
  until: Date,
  upcomingLimit = 1000,
): Promise<{ due: { id: string; tenantId: string }[]; upcoming: { id: string; tenantId: string; at: Date }[] }> {
  const at = tsParam(now);
  const dueAt = sql`greatest(${campaigns.nextRunAt}, ${campaigns.leaseUntil})`;
  const result = await db.execute(sql`select r.id, r.tenant_id, null::timestamptz as due_at from (${dueCampaignRows(db, now, limit)}) as r
    union all
    (select ${campaigns.id}, ${campaigns.tenantId}, ${dueAt} from ${campaigns}
      where ${active} and ${dueAt} > ${at} and ${dueAt} <= ${tsParam(until)} order by 3 limit ${upcomingLimit})`);
  const rows = rowsOf<{ id: string; tenant_id: string; due_at: string | Date | null }>(result);
  return {
    due: rows.filter((r) => r.due_at === null).map((r) => ({ id: r.id, tenantId: r.tenant_id })),
    upcoming: rows.flatMap((r) => (r.due_at === null ? [] : [{ id: r.id, tenantId: r.tenant_id, at: new Date(r.due_at) }])),
  };
}
