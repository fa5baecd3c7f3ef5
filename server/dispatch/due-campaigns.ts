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
 * One look for the in-process runner, in one statement: the due campaigns (as dueCampaignRows) and
 * `nextAt`, when the next one not due yet falls due (to know how long to sleep). A campaign that a worker
 * holds is due when its lease ends, not before: a runner beside another process's long step sleeps
 * instead of asking again at once. A campaign due now but not taken (its tenant's share of the workers
 * is busy) is not in `nextAt`: the step that frees a worker wakes the runner.
 */
export async function dueWork(db: Db, now: Date, limit: number): Promise<{ due: { id: string; tenantId: string }[]; nextAt: Date | null }> {
  const at = tsParam(now);
  const dueAt = sql`greatest(${campaigns.nextRunAt}, ${campaigns.leaseUntil})`;
  const result = await db.execute(sql`select n.next_at, r.id, r.tenant_id
    from (select min(${dueAt}) as next_at from ${campaigns} where ${active} and ${dueAt} > ${at}) as n
    left join lateral (${dueCampaignRows(db, now, limit)}) as r on true`);
  const rows = rowsOf<{ next_at: string | Date | null; id: string | null; tenant_id: string | null }>(result);
  const nextAt = rows[0]?.next_at ? new Date(rows[0].next_at) : null;
  return { due: rows.flatMap((r) => (r.id && r.tenant_id ? [{ id: r.id, tenantId: r.tenant_id }] : [])), nextAt };
}
