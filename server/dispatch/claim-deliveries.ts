import { and, asc, eq, getTableColumns, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import { campaigns, channels, deliveries } from "../../db/schema";
import { campaignLeaseMs } from "./campaign-lease";
import { channelSlowdownSql } from "./record-delivery";
import { transitionCtes } from "./transition";
import { eventsRecorded } from "../outbox/record-event";

/**
 * The lease a claim gives a delivery when no campaign lease is passed. A step passes its campaign
 * lease's end instead, and its heartbeat renews both together (campaign-lease.ts).
 */
export const deliveryLeaseMs = campaignLeaseMs;

/**
 * The monitoring copy goes first and apart (docs/decisions.md#monitoring-copy): while it is open (pending, backing off
 * for a retry, or in flight) on a connected channel, no segment group of the campaign may be taken.
 * Once it is sent or finally failed, the segment's groups go. (If its channel is offline the segment's
 * groups do not wait for it; it goes when its channel is back, and the campaign finishes after it.)
 */
const monitoringCopyOpen = (campaignId: string) => sql`exists (
  select 1 from ${deliveries} m join ${channels} mc on mc.id = m.channel_id
  where m.campaign_id = ${campaignId} and ${monitoringPosition("m")} and m.is_monitoring and m.state in ('pending', 'sending') and mc.status = 'connected')`;

/**
 * The monitoring copy's position (-1; the segment's groups are 0 and up): with it, a look for the open copy
 * is one probe of deliveries_open_idx (campaign_id, position). Without it the planner walked the campaign's
 * open rows to find the one with is_monitoring, three times a loop (docs/benchmarks.md, issue 14).
 */
const monitoringPosition = (alias: string) => sql.raw(`${alias}.position < 0`);

/**
 * Takes up to `limit` pending deliveries of the campaign whose channel is connected, marking them
 * `sending` under a lease, in one statement. FOR UPDATE SKIP LOCKED: two workers never take the same
 * row. The monitoring group's copy goes first and alone (position -1, and monitoringCopyOpen holds
 * the segment's groups back until it is out), then the segment's order.
 *
 * `lease`: the step's campaign lease (its `lease_until`, the fencing token). The claim takes rows only
 * while the campaign row still carries it, so a worker whose lease was taken over claims nothing, and
 * the claimed rows share its end (their heartbeat renews them with the campaign). And only while the campaign is
 * `sending`: a campaign paused or canceled since its step planned (while it waited out its pause) sends nothing more.
 */
export async function claimDeliveries(db: Db, campaignId: string, limit: number, now: Date, lease?: { until: Date }, start?: ClaimStart) {
  // A campaign's first loop (or its first after a pause): the campaign moves to `sending` in this statement
  // (status events included) and rows are taken only if it did.
  const transitionParts = start ? transitionCtes(db, campaignId, start.from, "sending", now) : null;
  const moving = transitionParts && {
    ...transitionParts,
    started: db.$with("started", {}).as(
      sql`update ${campaigns} set status = 'sending', pause_reason = null, updated_at = ${tsParam(now)},
            started_at = coalesce(started_at, ${tsParam(now)}) where id = (select id from locked) returning id`,
    ),
  };
  // The statement's snapshot still shows the status the campaign moves from.
  const statuses = ["sending", ...(moving?.sources ?? [])];
  // A normal (synchronous) commit: a claim lost on a crash would put an already sent delivery back to
  // pending without reconciliation. (Sent marks may commit asynchronously: a lost one leaves `sending`,
  // which is reconciled.)
  const picked = db
    .select({ id: deliveries.id })
    .from(deliveries)
    .innerJoin(channels, eq(channels.id, deliveries.channelId))
    .where(
      and(
        eq(deliveries.campaignId, campaignId),
        eq(deliveries.state, "pending"),
        or(isNull(deliveries.notBefore), lte(deliveries.notBefore, now)),
        eq(channels.status, "connected"),
        or(eq(deliveries.isMonitoring, true), sql`not ${monitoringCopyOpen(campaignId)}`),
        lease
          ? sql`exists (select 1 from ${campaigns} lc where lc.id = ${campaignId} and lc.lease_until = ${lease.until.toISOString()}::timestamptz
              and lc.status in (${sql.join(
                statuses.map((x) => sql`${x}`),
                sql`, `,
              )}))`
          : undefined,
      ),
    )
    // Position order walks deliveries_open_idx; the monitoring copy (position -1) comes first.
    .orderBy(asc(deliveries.position))
    .limit(limit)
    .for("update", { of: deliveries, skipLocked: true });
  const claimed = await (moving ? db.with(moving.locked, moving.recorded, moving.started) : db)
    .update(deliveries)
    .set({ state: "sending", attempts: sql`${deliveries.attempts} + 1`, leaseUntil: lease?.until ?? new Date(now.getTime() + deliveryLeaseMs), updatedAt: now })
    .where(and(inArray(deliveries.id, picked), moving ? sql`exists (select 1 from started)` : undefined))
    // With each row its channel's rate-limit slow-down (added to the campaign's pause after the loop).
    .returning({
      ...getTableColumns(deliveries),
      channelSlowdownMs: sql<number>`(select ${channelSlowdownSql("ch", now)} from ${channels} ch where ch.id = "deliveries".channel_id)`.mapWith(Number),
    });
  if (moving) eventsRecorded();
  return claimed.sort((a, b) => a.position - b.position);
}

/** A claim that also starts the campaign: it moves from one of `from` to `sending` in the claim's statement. */
export interface ClaimStart {
  from: (typeof campaigns.$inferSelect)["status"][];
}

/**
 * What the planner needs about the campaign's open deliveries, as existence checks that stop at the first
 * matching row of deliveries_open_idx (no count over the whole campaign each loop): SQL expressions, read
 * in the lease's own statement by a step (CampaignLease.acquire), or alone by deliveryOutlook.
 * `sendable` is capped at 100, the largest dispatches_per_loop.
 */
export function outlookProbe(campaignId: string, now: Date) {
  const at = tsParam(now);
  const open = sql`from ${deliveries} d join ${channels} c on c.id = d.channel_id where d.campaign_id = ${campaignId}`;
  return {
    sendable: sql<number>`(select count(*)::int from (select 1 ${open} and d.state = 'pending' and (d.not_before is null or d.not_before <= ${at}) and c.status = 'connected'
        and (d.is_monitoring or not ${monitoringCopyOpen(campaignId)}) limit 100) s)`,
    waitingOnline: sql<boolean>`exists (select 1 ${open} and d.state in ('pending', 'sending') and c.status = 'connected')`,
    anyOpen: sql<boolean>`exists (select 1 from ${deliveries} d where d.campaign_id = ${campaignId} and d.state in ('pending', 'sending'))`,
    // The monitoring copy is outside the campaign's counters: the campaign finishes only after it too.
    monitoringOpen: sql<boolean>`exists (select 1 from ${deliveries} d where d.campaign_id = ${campaignId} and ${monitoringPosition("d")} and d.is_monitoring
        and d.state in ('pending', 'sending'))`,
  };
}

type Probed = { sendable: number; waitingOnline: boolean; anyOpen: boolean; monitoringOpen: boolean };

/** The outlook alone, in one query (a step that reconciled reads it again after). */
export async function deliveryOutlook(db: Db, campaignId: string, now: Date) {
  const [row] = await db.select(outlookProbe(campaignId, now)).from(sql`(select 1) as one`);
  return outlookOf(db, campaignId, now, row);
}

/** The planner's outlook from the probe's answer; only when nothing can go now is the next retry read (a walk over the open rows). */
export async function outlookOf(db: Db, campaignId: string, now: Date, row: Probed) {
  const sendable = Number(row.sendable);
  let nextRetryAt: Date | null = null;
  if (sendable === 0) {
    const [retry] = await db
      .select({ at: sql<string | null>`min(${deliveries.notBefore})` })
      .from(deliveries)
      .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.state, "pending"), sql`${deliveries.notBefore} > ${tsParam(now)}`));
    nextRetryAt = retry?.at ? new Date(retry.at) : null;
  }
  return { sendableNow: sendable, channelsOffline: row.anyOpen && !row.waitingOnline, nextRetryAt, monitoringOpen: row.monitoringOpen };
}
