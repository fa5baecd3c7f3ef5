import { sql, type SQL } from "drizzle-orm";
import type { ChannelCounts } from "../../db/schema";

/**
 * A campaign's counters per channel (campaigns.channel_counts, `{channel id: [total, sent, failed]}`), kept exact by
 * the statements that keep total/sent/failed, in the same UPDATE: the fan-out writes them, the sent and failed marks,
 * a resend and a late sent move them, failover moves a pending group's `total` from one channel to another. The
 * segment's groups only (the monitoring copy moves none). info-campaign reads them (one row), never counts.
 */

/**
 * `counts` (a jsonb expression) plus `deltas`: a SELECT of rows (channel_id text, total int, sent int, failed int), any
 * number per channel, summed. A channel not yet in `counts` is added; a channel stays once listed (at zero when
 * failover moved all its groups away).
 */
export const addChannelCountsSql = (counts: SQL, deltas: SQL) =>
  sql`(select coalesce(jsonb_object_agg(k, jsonb_build_array(t, s, f)), '{}'::jsonb) from (
    select k, sum(t)::int as t, sum(s)::int as s, sum(f)::int as f from (
      select key as k, (value->>0)::int as t, (value->>1)::int as s, (value->>2)::int as f from jsonb_each(${counts})
      union all select * from (${deltas}) as dl) as x
    group by k) as y)`;

/** `counts` with one channel's counters moved by (total, sent, failed): a single delivery's change. */
export const addChannelCountSql = (counts: SQL, channelId: string | SQL, total: number, sent: number, failed: number) =>
  sql`jsonb_set(${counts}, array[${channelId}::text], jsonb_build_array(
    coalesce((${counts} -> ${channelId}::text ->> 0)::int, 0) + ${total}::int,
    coalesce((${counts} -> ${channelId}::text ->> 1)::int, 0) + ${sent}::int,
    coalesce((${counts} -> ${channelId}::text ->> 2)::int, 0) + ${failed}::int))`;

/** One channel's share of a campaign's segment groups, as info-campaign reports it. */
export interface ChannelCounters {
  channelId: string;
  sent: number;
  pending: number;
  failed: number;
}

/**
 * The kept counters as info-campaign lists them: in the campaign's order of channels (the segment's, then those
 * failover moved groups to), then any other channel counted; a channel with no groups left stays listed, with zeros.
 */
export function channelCountersOf(channelIds: readonly string[], counts: ChannelCounts): ChannelCounters[] {
  const row = (channelId: string) => {
    const [total, sent, failed] = counts[channelId] ?? [0, 0, 0];
    return { channelId, sent, pending: total - sent - failed, failed };
  };
  return [...channelIds, ...Object.keys(counts).filter((id) => !channelIds.includes(id))].map(row);
}
