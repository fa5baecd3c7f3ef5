import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rowsOf } from "../../db/params";
import { campaigns, deliveries, pollVotes } from "../../db/schema";
import type { CampaignContent } from "../dispatch/campaign-content";

export interface PollResults {
  question: string;
  multipleAnswers: boolean;
  /** Votes per option, in the poll's order; null when the platform does not report votes. */
  options: { text: string; votes: number | null }[];
  votesAvailable: boolean;
}

/**
 * A poll campaign's votes per option, summed over its groups (the monitoring group's copy left out, as in
 * `groups`): the voters whose current choice holds the option. `votesAvailable` false: every count is null,
 * never 0 (docs/polls.md).
 */
export async function pollResults(db: Db, campaignId: string, votesAvailable: boolean): Promise<PollResults | null> {
  const [row] = rowsOf<{ content: CampaignContent; counts: Record<string, number> | null }>(
    await db.execute(sql`select c.content,
        (select json_object_agg(o.option, o.n) from (
           select opt as option, count(*)::int as n from ${pollVotes} v, jsonb_array_elements_text(v.options) opt
           where v.campaign_id = c.id
             and not exists (select 1 from ${deliveries} d where d.campaign_id = v.campaign_id and d.id_group = v.id_group and d.is_monitoring)
           group by opt) o) as counts
      from ${campaigns} c where c.id = ${campaignId}`),
  );
  const poll = row?.content.poll;
  if (!poll) return null;
  const counts = row.counts ?? {};
  return {
    question: poll.question,
    multipleAnswers: poll.multiple_answers,
    options: poll.options.map((text) => ({ text, votes: votesAvailable ? (counts[text] ?? 0) : null })),
    votesAvailable,
  };
}
