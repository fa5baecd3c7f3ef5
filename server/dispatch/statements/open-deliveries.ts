/**
 * Fragments the claim (claim.ts) and the planner's probe (outlookProbe, claim-deliveries.ts) share: whether a channel
 * may send now, and whether the campaign's monitoring copy is still open. Each takes the row it reads as a Relation
 * (db/relation.ts), not an alias string.
 */
import { sql } from "drizzle-orm";
import { tsParam } from "../../../db/errors";
import type { At, Bind } from "../../../db/params";
import { tableAs, type Relation } from "../../../db/relation";
import { channels, deliveries } from "../../../db/schema";
import { sendableChannelSql } from "../../numbers/health";

/**
 * Whether the channel row `channel` may send at `at`: it can send (sendableChannelSql: connected, and not
 * cooling, capped, restricted, logged out or banned) and its least gap since its last send has passed
 * (`next_send_at`, set only for a channel with min_send_gap_seconds).
 */
export const channelCanSendSql = (channel: Relation<"status" | "health_state" | "health_until" | "next_send_at">, at: At) =>
  sql<boolean>`(${sendableChannelSql(channel, at)} and (${channel.col("next_send_at")} is null or ${channel.col("next_send_at")} <= ${tsParam(at)}))`;

/**
 * The monitoring copy's position (-1; the segment's groups are 0 and up): with it, a look for the open copy
 * is one probe of deliveries_open_idx (campaign_id, position). Without it the planner walked the campaign's
 * open rows to find the one with is_monitoring, three times a loop (docs/history/benchmarks.md, issue 14).
 */
export const monitoringPosition = (delivery: Relation<"position">) => sql`${delivery.col("position")} < 0`;

/**
 * The monitoring copy goes first and apart (docs/decisions.md#monitoring-copy): while it is open (pending, backing off
 * for a retry, or in flight) on a channel that can send, no segment group of the campaign may be taken.
 * Once it is sent or finally failed, the segment's groups go. (If its channel cannot send and failover has no
 * other for it, the segment's groups do not wait for it; it goes when its channel can, and the campaign finishes after it.)
 */
export const monitoringCopyOpen = (campaignId: Bind<string>, now: At) => {
  const m = tableAs(deliveries, "m");
  return sql`exists (
  select 1 from ${deliveries} m join ${channels} mc on mc.id = m.channel_id
  where m.campaign_id = ${campaignId} and ${monitoringPosition(m)} and m.is_monitoring and m.state in ('pending', 'sending') and ${sendableChannelSql(tableAs(channels, "mc"), now)})`;
};
