import { sql, type SQL } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import type { At, Bind } from "../../db/params";
import { tableAs, type Relation } from "../../db/relation";
import { campaigns, channels, deliveries, monitoringGroups, segmentChannels } from "../../db/schema";
import { brasiliaDay } from "../numbers/budget";
import { sendableChannelSql } from "../numbers/health";
import { eventsRecorded } from "../outbox/record-event";
import type { ClaimBudget } from "./channel-budgets";
import { claimStatement, type ClaimStart } from "./statements/claim";
import { channelCanSendSql, monitoringCopyOpen, monitoringPosition } from "./statements/open-deliveries";

export type { ClaimStart };

/**
 * Takes up to `limit` pending deliveries of the campaign whose channel may send, marking them `sending`
 * under a lease, in one statement (statements/claim.ts). FOR UPDATE SKIP LOCKED: two workers never take the
 * same row. The monitoring group's copy goes first and alone, then the segment's order.
 *
 * `lease`: the step's campaign lease (its `lease_until`, the fencing token). The claim takes rows only
 * while the campaign row still carries it, so a worker whose lease was taken over claims nothing, and
 * the claimed rows share its end (their heartbeat renews them with the campaign). And only while the campaign is
 * `sending`: a campaign paused or canceled since its step planned (while it waited out its pause) sends nothing more.
 * `start`: a first loop's claim also moves the campaign to `sending` (with its events), and takes rows only if it did.
 *
 * The numbers' budgets (CONTRACT §7) are enforced in the same statement: a second process's claim waits for the
 * channels' locks and reads the counters the first left, so no send passes a cap. Each row returned carries
 * `cappedChannels`: the channels this claim brought to their cap (the caller marks them `capped`).
 */
export async function claimDeliveries(
  db: Db,
  campaignId: string,
  limit: number,
  now: Date,
  lease?: { until: Date },
  start?: ClaimStart,
  budget: ClaimBudget = { at: now, day: brasiliaDay(now), limits: [] },
) {
  const { rows, moving } = await claimStatement(db, { campaignId, limit, now, lease, start, budget });
  if (moving) eventsRecorded();
  return rows.sort((a, b) => a.position - b.position);
}

/**
 * The channels a campaign is sent through, for the small probes that look at channels rather than rows: the
 * segment's channels and its monitoring group's (a delivery moves only among those).
 */
const campaignChannels = (
  campaignId: Bind<string>,
) => sql`(select sc.channel_id from ${segmentChannels} sc join ${campaigns} cc on cc.segment_id = sc.segment_id
    where cc.id = ${campaignId}
  union select mg.channel_id from ${monitoringGroups} mg join ${campaigns} cm on cm.segment_id = mg.segment_id where cm.id = ${campaignId})`;

/**
 * What the planner needs about the campaign's open deliveries, as existence checks that stop at the first
 * matching row of deliveries_open_idx (no count over the whole campaign each loop): SQL expressions, read
 * in the lease's own statement by a step (CampaignLease.acquire), or alone by deliveryOutlook.
 * `sendable` is capped at 100, the largest dispatches_per_loop. `blocked`: one of the campaign's channels
 * cannot send (offline, or its health stops it): its pending deliveries may have to move (failover.ts).
 */
export function outlookProbe(campaignId: Bind<string>, now: At) {
  const at = tsParam(now);
  const open = sql`from ${deliveries} d join ${channels} c on c.id = d.channel_id where d.campaign_id = ${campaignId}`;
  return {
    sendable: sql<number>`(select count(*)::int from (select 1 ${open} and d.state = 'pending' and (d.not_before is null or d.not_before <= ${at})
        and ${channelCanSendSql(tableAs(channels, "c"), now)} and (d.is_monitoring or not ${monitoringCopyOpen(campaignId, now)}) limit 100) s)`,
    waitingOnline: sql<boolean>`exists (select 1 ${open} and d.state in ('pending', 'sending') and ${sendableChannelSql(tableAs(channels, "c"), now)})`,
    anyOpen: sql<boolean>`exists (select 1 from ${deliveries} d where d.campaign_id = ${campaignId} and d.state in ('pending', 'sending'))`,
    // The monitoring copy is outside the campaign's counters: the campaign finishes only after it too.
    monitoringOpen: sql<boolean>`exists (select 1 from ${deliveries} d where d.campaign_id = ${campaignId} and ${monitoringPosition(tableAs(deliveries, "d"))} and d.is_monitoring
        and d.state in ('pending', 'sending'))`,
    blocked: sql<boolean>`exists (select 1 from ${channels} bc where bc.id in ${campaignChannels(campaignId)} and not ${sendableChannelSql(tableAs(channels, "bc"), now)})`,
  };
}

type Probed = { sendable: number; waitingOnline: boolean; anyOpen: boolean; monitoringOpen: boolean };

/** The outlook alone, in one query (a step that reconciled or moved deliveries reads it again after). */
export async function deliveryOutlook(db: Db, campaignId: string, now: Date) {
  const [row] = await db.select(outlookProbe(campaignId, now)).from(sql`(select 1) as one`);
  return outlookOf(db, campaignId, now, row);
}

/** Why nothing of a campaign can be sent (its open deliveries' channels all stop it), and until when at least. */
export interface Blocked {
  /** `channel_limits` when every channel holding it back is connected and `capped` or `cooling`. */
  reason: "channel_offline" | "channel_limits";
  /** The earliest end of those limits (null: none ends by itself). */
  until: Date | null;
}

/**
 * The planner's outlook from the probe's answer. Only when nothing can go now is the next retry read (a walk
 * over the open rows, and the campaign's channels' gaps), and only when nothing can go at all, why.
 */
export async function outlookOf(db: Db, campaignId: string, now: Date, row: Probed) {
  const sendable = Number(row.sendable);
  let nextRetryAt: Date | null = null;
  let blocked: Blocked | null = null;
  if (sendable === 0) {
    const at = tsParam(now);
    const [retry] = await db
      .select({
        at: sql<
          string | null
        >`least((select min(d.not_before) from ${deliveries} d where d.campaign_id = ${campaignId} and d.state = 'pending' and d.not_before > ${at}),
          (select min(g.next_send_at) from ${channels} g where g.id in ${campaignChannels(campaignId)} and g.next_send_at > ${at}))`,
      })
      .from(sql`(select 1) as one`);
    nextRetryAt = retry?.at ? new Date(retry.at) : null;
  }
  if (row.anyOpen && !row.waitingOnline) blocked = await blockedBy(db, campaignId, now);
  return { sendableNow: sendable, blocked, nextRetryAt, monitoringOpen: row.monitoringOpen };
}

/** The channels of the campaign's open deliveries (none can send): channel_limits when all are only capped or cooling. */
async function blockedBy(db: Db, campaignId: string, now: Date): Promise<Blocked> {
  const at = tsParam(now);
  const c = tableAs(channels, "c");
  const [row] = await db
    .select({
      limits: sql<boolean>`coalesce(bool_and(${timedStop(c, at)}), false)`,
      until: sql<string | null>`min(c.health_until) filter (where ${timedStop(c, at)})`,
    })
    .from(sql`${channels} c`)
    .where(sql`c.id = any(array(select distinct d.channel_id from ${deliveries} d where d.campaign_id = ${campaignId} and d.state in ('pending', 'sending')))`);
  return { reason: row?.limits ? "channel_limits" : "channel_offline", until: row?.until ? new Date(row.until) : null };
}

/** Connected, and stopped only by a limit that ends by itself (cooling, capped). */
function timedStop(channel: Relation<"status" | "health_state" | "health_until">, at: SQL) {
  const r = channel.col;
  return sql`(${r("status")} = 'connected' and ${r("health_state")} in ('cooling', 'capped') and ${r("health_until")} > ${at})`;
}
