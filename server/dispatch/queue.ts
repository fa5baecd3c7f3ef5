import { sql, type SQL } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { At } from "../../db/params";
import { campaigns } from "../../db/schema";
import type { Settings } from "../settings/schema";

const recheckMs = 1000;

/**
 * What the queue (queue.concurrent_mode) says about a pending campaign, as SQL expressions over its row
 * (`"campaigns"`, the lease's UPDATE target), read in the lease's own statement (CampaignLease.acquire):
 * for each mode that has a queue (`disabled`: one campaign at a time per tenant; `per_channel`: one at a
 * time per channel), whether a campaign of the same queue goes first, and when the queue's last finished
 * campaign lets the next start (queue_ready_at). Only a pending campaign's row evaluates them (a CASE:
 * the subqueries of a sending one never run).
 */
export function queueProbe(now: At) {
  const at = tsParam(now);
  const tenantQueue = sql.raw(`q.tenant_id = "campaigns".tenant_id and q.id <> "campaigns".id`);
  const channelQueue = sql.raw(`q.tenant_id = "campaigns".tenant_id and q.id <> "campaigns".id and q.segment_id in (
      select shared.segment_id from segment_channels shared
      where shared.channel_id in (select mine.channel_id from segment_channels mine where mine.segment_id = "campaigns".segment_id))`);
  const pending = (expr: SQL) => sql`(case when "campaigns".status = 'pending' then ${expr} end)`;
  const blocked = (queue: SQL) =>
    pending(sql`exists (select 1 from ${campaigns} q where ${queue} and (
      -- running (a user-paused campaign frees the queue)
      q.status = 'sending' or (q.status = 'paused' and q.pause_reason in ('schedule', 'channel_offline'))
      -- due before this one (FIFO by start time)
      or (q.status = 'pending' and coalesce(q.scheduled_at, q.created_at) <= ${at}
          and (coalesce(q.scheduled_at, q.created_at), q.id) < (coalesce("campaigns".scheduled_at, "campaigns".created_at), "campaigns".id))))`);
  const readyAt = (queue: SQL) => pending(sql`(select max(q.queue_ready_at) from ${campaigns} q where ${queue})`);
  return {
    queueBlocked: blocked(tenantQueue) as SQL<boolean | null>,
    queueReadyAt: readyAt(tenantQueue).mapWith(campaigns.queueReadyAt) as SQL<Date | null>,
    channelQueueBlocked: blocked(channelQueue) as SQL<boolean | null>,
    channelQueueReadyAt: readyAt(channelQueue).mapWith(campaigns.queueReadyAt) as SQL<Date | null>,
  };
}

export type QueueProbed = { [K in keyof ReturnType<typeof queueProbe>]: ReturnType<typeof queueProbe>[K] extends SQL<infer T> ? T : never };

/**
 * When may this pending campaign start, per queue.concurrent_mode (from queueProbe's answer)? After a
 * campaign finishes, the next waits its random interval (queue_ready_at). Null when it may start now.
 */
export function queueFreeAt(probed: QueueProbed, settings: Settings, now: Date): Date | null {
  const mode = settings.queue.concurrent_mode;
  if (mode === "enabled") return null;
  const [blocked, readyAt] = mode === "per_channel" ? [probed.channelQueueBlocked, probed.channelQueueReadyAt] : [probed.queueBlocked, probed.queueReadyAt];
  if (blocked) return new Date(now.getTime() + recheckMs);
  return readyAt && readyAt > now ? readyAt : null;
}
