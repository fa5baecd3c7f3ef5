import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { campaigns, deliveries, pollVotes } from "../../db/schema";
import { decodeDeliveryKey } from "../dispatch/delivery-key";
import type { PollVote } from "../messaging/provider";
import type { CampaignContent } from "../dispatch/campaign-content";

/**
 * Votes the platform reported on a poll the service sent (docs/polls.md): each voter's current choice is one
 * row per (campaign, group, voter), so a vote reported twice (a gateway resending its webhook) is counted
 * once, and a later vote replaces an earlier one. A report older than the stored vote changes nothing. Only
 * options of the campaign's poll are kept (a vote naming none of them is an empty choice). Votes on a
 * delivery that is not a poll campaign's, or not this channel's, are ignored.
 */
export async function recordPollVotes(db: Db, event: { channelId: string; deliveryKey: string; votes: PollVote[] }, now: Date) {
  const key = decodeDeliveryKey(event.deliveryKey);
  if (!key || event.votes.length === 0) return;
  const [target] = await db
    .select({ content: campaigns.content })
    .from(campaigns)
    // A vote is on a poll that went out: the delivery is past its claim (deliveries_campaign_group_uq's rows).
    .innerJoin(deliveries, sql`${deliveries.campaignId} = ${campaigns.id} and ${deliveries.groupId} = ${key.groupId} and ${deliveries.state} <> 'pending'`)
    .where(sql`${campaigns.id} = ${key.campaignId} and ${campaigns.messageType} = 'poll' and ${deliveries.channelId} = ${event.channelId}`);
  const poll = (target?.content as CampaignContent | undefined)?.poll;
  if (!poll) return;
  const known = new Set(poll.options);
  // One row per voter (the last report of a voter in one batch wins), as one JSON parameter.
  const latest = new Map<string, PollVote>();
  for (const v of event.votes) {
    const seen = latest.get(v.voter);
    if (!seen || seen.at.getTime() <= v.at.getTime()) latest.set(v.voter, v);
  }
  const rows = [...latest.values()].map((v) => ({ voter: v.voter, options: [...new Set(v.options.filter((o) => known.has(o)))], at: v.at.toISOString() }));
  await db.execute(sql`insert into ${pollVotes} (campaign_id, id_group, voter, options, voted_at, updated_at)
    select ${key.campaignId}, ${key.groupId}, v.voter, v.options, v.at, ${tsParam(now)}
    from json_to_recordset(${JSON.stringify(rows)}::json) as v(voter text, options jsonb, at timestamptz)
    -- A vote taken back by someone never recorded as voting leaves no row.
    where jsonb_array_length(v.options) > 0
       or exists (select 1 from ${pollVotes} p where p.campaign_id = ${key.campaignId} and p.id_group = ${key.groupId} and p.voter = v.voter)
    on conflict (campaign_id, id_group, voter) do update set options = excluded.options, voted_at = excluded.voted_at, updated_at = excluded.updated_at
    where ${pollVotes.votedAt} <= excluded.voted_at`);
}
