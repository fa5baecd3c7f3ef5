/**
 * The loop's sent mark (recordSentMany, record-delivery.ts), whole: one statement, so one round trip (a transaction of
 * five statements was seven). The rows move, the counters (also per channel, campaigns.channel_counts) and the failure streaks move by what moved, the
 * campaign_progress event is written when one is due (progressEveryMs), and the step's lease is let go when it is
 * passed, all committed together. The campaign row is locked (`prev`) before its last event time is read, so two
 * writers cannot both find an event due. Committed asynchronously (set_config in the statement's own transaction):
 * a sent mark lost in a crash leaves the row `sending`, which is reconciled with the provider, never resent blindly.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { asyncCommitColumn, tsParam } from "../../../db/errors";
import { rowsOf } from "../../../db/params";
import { relation, tableAs, type SqlColumnsOf } from "../../../db/relation";
import { campaigns, deliveries } from "../../../db/schema";
import { insertEventSql } from "../../outbox/record-event";
import { progressEventSql, progressEveryMs } from "../campaign-events";
import { releasedNextRunSql, type Released } from "../campaign-lease";
import { addChannelCountsSql } from "../channel-counts";
import { pendingGroupsSql } from "../group-counters";

/**
 * The step's lease let go in the sent mark's own statement (one round trip fewer per loop): only when the
 * campaign row still carries `token` (the lease's fencing token), with the next run set as a release sets
 * it: `doneAt` when none of the campaign's groups is left after this mark, else `nextRunAt`.
 */
export interface SentRelease {
  token: Date;
  nextRunAt: Date;
  doneAt?: Date;
}

export interface RecordSentInput {
  campaignId: string;
  /** The loop's deliveries that went out, each with the provider's message id. */
  sent: { id: number; channelId: string; messageId: string }[];
  at: Date;
  release?: SentRelease;
}

export interface RecordSentOutput {
  /** campaign_progress events written (0 or 1). */
  events: number;
  /** The campaign as the statement left it when it let the lease go; null when it did not (or nothing moved). */
  released: Released | null;
}

/** The campaigns table in the statement (its UPDATE's target). */
const campaignsRow = tableAs(campaigns);
/** `tally`: what the mark moved. */
const tally = relation("tally", ["groups", "channels"]);
/** `c`: the campaign row as the UPDATE left it, with whether an event is due (`emit`) and the lease let go (`held`). */
const c = relation<SqlColumnsOf<typeof campaigns> | "emit" | "held">("c");

export async function recordSentStatement(db: Db, { campaignId, sent, at, release }: RecordSentInput): Promise<RecordSentOutput> {
  // One JSON parameter carries the loop's rows, however many (no per-row parameters to build and bind).
  const rows = JSON.stringify(sent.map((s) => ({ id: s.id, message_id: s.messageId })));
  const when = tsParam(at);
  // Whether this statement lets the lease go (the row still carries the token), and the next run it sets then.
  const held = release ? sql`lease_until = ${tsParam(release.token)}` : sql`false`;
  // The counters as this statement leaves them: the groups it marks sent are no longer pending.
  const next = release ? releasedNextRunSql(sql`${pendingGroupsSql(campaignsRow)} - ${tally.col("groups")}`, release) : sql`${campaigns.nextRunAt}`;
  const event = progressEventSql(c, sql`${c.name} where ${c.col("emit")}`, at);
  const result = await db.execute(sql`with moved as (
      update ${deliveries} d set state = 'sent', provider_message_id = v.message_id, sent_at = ${when}, lease_until = null, error = null, updated_at = ${when}
      from (select d.id, r.message_id from ${deliveries} d join json_to_recordset(${rows}::json) as r(id bigint, message_id text) on d.id = r.id
            where d.campaign_id = ${campaignId} and d.state = 'sending' order by d.id for update of d) as v
      where d.id = v.id
      returning d.channel_id, d.is_monitoring),
    -- The monitoring copy is not one of the campaign's groups: it moves no counter (docs/decisions.md#monitoring-copy), but
    -- its success does end its channel's failure streak (same channel health).
    ${tally.name} as (select count(*) filter (where not is_monitoring)::int as groups, array_agg(distinct channel_id::text) as channels
      from moved having count(*) > 0),
    -- Locked after the rows (tally reads moved), in the order every writer takes them.
    prev as (select id, last_progress_at, ${held} as held from ${campaigns} where id = ${campaignId} and exists (select 1 from ${tally.name}) for update),
    ${c.name} as (
      update ${campaigns} set sent = ${campaigns}.sent + ${tally.col("groups")},
        channel_counts = ${addChannelCountsSql(sql`${campaigns}.channel_counts`, sql`select channel_id::text, 0, count(*)::int, 0 from moved where not is_monitoring group by channel_id`)},
        -- A success ends the channel's run of consecutive failures.
        failure_streaks = ${campaigns}.failure_streaks - ${tally.col("channels")},
        last_progress_at = case when v.emit then ${when} else ${campaigns}.last_progress_at end,
        lease_until = case when v.held then null else ${campaigns}.lease_until end,
        next_run_at = case when v.held then ${next} else ${campaigns}.next_run_at end
      from ${tally.name}, (select p.id, p.held, ${tally.col("groups")} > 0 and (p.last_progress_at is null
                     or ${when} - p.last_progress_at >= ${`${progressEveryMs} milliseconds`}::interval) as emit from prev p, ${tally.name}) as v
      where ${campaigns}.id = v.id
      returning ${campaigns}.*, v.emit, v.held),
    event as (${insertEventSql(event, at)} returning 1)
    select ${asyncCommitColumn}, (select count(*) from event)::int as events,
      (select ${c.col("status")} from ${c.name} where ${c.col("held")}) as status,
      (select ${c.col("next_run_at")} from ${c.name} where ${c.col("held")}) as next_run_at`);
  const [row] = rowsOf<{ events: number; status: string | null; next_run_at: string | Date | null }>(result);
  return {
    events: row?.events ?? 0,
    released: row?.status && row.next_run_at ? { status: row.status, nextRunAt: new Date(row.next_run_at) } : null,
  };
}
