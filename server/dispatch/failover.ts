/**
 * Failover (CONTRACT §7; docs/dispatch.md#several-numbers-per-group): the pending deliveries of a channel that
 * cannot send (offline, or cooling, capped, restricted, logged out, banned) move to another of the segment's
 * channels that reaches the group and can send, spread over them. Only `pending` rows move: a send in flight,
 * or whose outcome is unknown, stays on its channel until it is settled (exactly once per group). A delivery
 * no other channel can take waits where it is.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { rowsOf } from "../../db/params";
import { auditLog, campaigns, channels, deliveries, launches, launchGroupJoins, launchGroups, segmentGroupChannels } from "../../db/schema";
import { tableAs } from "../../db/relation";
import { sendableChannelSql } from "../numbers/health";
import { addChannelCountsSql } from "./channel-counts";

/**
 * Moves what can move, in one statement (run by a step when one of the campaign's channels cannot send).
 * Each row moved records where it came from (`moved_from`, `moved_at`); the campaign's channel list gains the
 * new ones, and its counters per channel move with the rows (channel_counts). Returns how many moved.
 */
export async function moveStranded(db: Db, campaignId: string, now: Date): Promise<number> {
  const at = tsParam(now);
  const moved = rowsOf<{ id: number; from: string; to: string }>(
    await db.execute(sql`with stranded as (
        -- Rows a concurrent claim holds are skipped: it found their channel able to send.
        select d.id, d.channel_id, d.id_group, d.position from ${deliveries} d join ${channels} c on c.id = d.channel_id
        where d.campaign_id = ${campaignId} and d.state = 'pending' and not ${sendableChannelSql(tableAs(channels, "c"), now)}
        for update of d skip locked),
      choices as (
        select s.id, s.rn, array_agg(r.channel_id order by r.channel_id) as alts
        from (select *, row_number() over (order by position) as rn from stranded) s
          join ${campaigns} cm on cm.id = ${campaignId}
          join ${segmentGroupChannels} r on r.segment_id = cm.segment_id and r.id_group = s.id_group and r.channel_id <> s.channel_id
          join ${channels} rc on rc.id = r.channel_id and ${sendableChannelSql(tableAs(channels, "rc"), now)}
        group by s.id, s.rn),
      moved as (
        -- Spread over the channels that can take them: the n-th row goes to the (n mod k)-th of its k choices.
        update ${deliveries} d set channel_id = ch.alts[1 + (ch.rn % array_length(ch.alts, 1))], moved_from = d.channel_id, moved_at = ${at}, updated_at = ${at}
        from choices ch where d.id = ch.id and d.state = 'pending'
        returning d.id, d.moved_from, d.channel_id, d.is_monitoring),
      added as (
        select coalesce(jsonb_agg(distinct m.channel_id), '[]'::jsonb) as ids from moved m join ${campaigns} cl on cl.id = ${campaignId}
        where not m.is_monitoring and not cl.channel_ids @> jsonb_build_array(m.channel_id)),
      listed as (
        -- The campaign's channels, in order: those it had, then the new ones; and its counters per channel, whose groups
        -- moved with the rows (a pending group is one fewer of its old channel's total, one more of its new one's).
        update ${campaigns} set channel_ids = ${campaigns.channelIds} || (select ids from added),
          channel_counts = ${addChannelCountsSql(
            sql`${campaigns.channelCounts}`,
            sql`select moved_from::text, -1, 0, 0 from moved where not is_monitoring union all select channel_id::text, 1, 0, 0 from moved where not is_monitoring`,
          )}
        where ${campaigns.id} = ${campaignId} and exists (select 1 from moved where not is_monitoring)),
      audited as (
        -- The audit log's system entry (docs/team.md#audit-log), in this same statement: one per failover, not per row.
        insert into ${auditLog} (at, tenant_id, actor_type, actor_label, action, target, outcome)
        select ${at}, cm.tenant_id, 'system', 'service', 'campaign.failover', ${campaignId}, 'ok' from ${campaigns} cm
        where cm.id = ${campaignId} and exists (select 1 from moved))
      select id, moved_from as "from", channel_id as "to" from moved`),
  );
  if (moved.length > 0) {
    const pairs = new Map<string, number>();
    for (const m of moved) pairs.set(`${m.from} → ${m.to}`, (pairs.get(`${m.from} → ${m.to}`) ?? 0) + 1);
    console.log(
      `[dispatch] campaign ${campaignId} moved ${moved.length} pending to channels that can send: ${[...pairs].map(([k, n]) => `${n} ${k}`).join(", ")}`,
    );
  }
  return moved.length;
}

/**
 * The platform refused a send because the channel's number is not in the group (or not an admin where only admins
 * post; ProviderSendError `notInGroup`): the channel no longer reaches the group, in any segment (its
 * segment_group_channels rows go), and a launch that had put it there records it as left out (launch_group_joins
 * `not_in_group`: shown, added again by the launch pass with backoff). The delivery, which certainly did not go
 * out, moves back to `pending` on another channel of the campaign's segment that reaches the group (one that can
 * send first), the attempt not counted. Returns false when no channel reaches the group (the caller fails it).
 * Only a definite refusal comes here: an unknown outcome never moves (exactly once, CONTRACT §7).
 */
export async function moveNotInGroup(
  db: Db,
  d: { id: number; campaignId: string; channelId: string; groupId: string },
  error: string,
  now: Date,
): Promise<boolean> {
  const at = tsParam(now);
  const retryAt = tsParam(new Date(now.getTime() + 5 * 60_000));
  return db.transaction(async (tx) => {
    await tx.execute(sql`delete from ${segmentGroupChannels} where id_group = ${d.groupId} and channel_id = ${d.channelId}`);
    await tx.execute(sql`insert into ${launchGroupJoins} (launch_id, id_group, channel_id, reason, attempts, retry_at, since)
      select l.id, lg.id_group, ${d.channelId}, 'not_in_group', 0, ${retryAt}, ${at}
      from ${launchGroups} lg join ${launches} l on l.id = lg.launch_id
      where lg.id_group = ${d.groupId} and l.channel_ids @> jsonb_build_array(${d.channelId}::text)
      on conflict do nothing`);
    const moved = rowsOf<{ to: string; isMonitoring: boolean }>(
      await tx.execute(sql`with alt as (
          select r.channel_id from ${campaigns} cm
            join ${segmentGroupChannels} r on r.segment_id = cm.segment_id and r.id_group = ${d.groupId} and r.channel_id <> ${d.channelId}
            join ${channels} rc on rc.id = r.channel_id
          where cm.id = ${d.campaignId}
          order by ${sendableChannelSql(tableAs(channels, "rc"), now)} desc, r.channel_id limit 1)
        update ${deliveries} set channel_id = (select channel_id from alt), moved_from = ${deliveries.channelId}, moved_at = ${at}, state = 'pending',
          attempts = greatest(${deliveries.attempts} - 1, 0), lease_until = null, error = ${error.slice(0, 500)}, updated_at = ${at}
        where ${deliveries.id} = ${d.id} and ${deliveries.state} = 'sending' and exists (select 1 from alt)
        returning ${deliveries.channelId} as "to", ${deliveries.isMonitoring} as "isMonitoring"`),
    );
    if (moved.length === 0) return false;
    const [m] = moved;
    if (!m.isMonitoring) {
      await tx.execute(sql`update ${campaigns} set channel_ids = ${campaigns.channelIds} || jsonb_build_array(${m.to}::text)
        where ${campaigns.id} = ${d.campaignId} and not ${campaigns.channelIds} @> jsonb_build_array(${m.to}::text)`);
    }
    console.log(`[dispatch] campaign ${d.campaignId}: ${d.channelId} is not in ${d.groupId}; its delivery moved to ${m.to}`);
    return true;
  });
}
