import { and, eq, inArray, max, ne, or, sql } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import { campaigns, segmentChannels } from "../../db/schema";
import type { Settings } from "../settings/schema";

const recheckMs = 1000;

/**
 * When may this pending campaign start, per queue.concurrent_mode?
 * `disabled`: one campaign at a time per tenant, FIFO by start time; `per_channel`: one at a time per
 * channel; `enabled`: no queue. After a campaign finishes, the next waits its random interval
 * (queue_ready_at). Returns null when it may start now.
 */
export async function queueFreeAt(db: Db, c: typeof campaigns.$inferSelect, settings: Settings, now: Date): Promise<Date | null> {
  const mode = settings.queue.concurrent_mode;
  if (mode === "enabled") return null;

  const sameQueue = [eq(campaigns.tenantId, c.tenantId), ne(campaigns.id, c.id)];
  if (mode === "per_channel") {
    const mine = db.select({ id: segmentChannels.channelId }).from(segmentChannels).where(eq(segmentChannels.segmentId, c.segmentId));
    const sharing = db.select({ id: segmentChannels.segmentId }).from(segmentChannels).where(inArray(segmentChannels.channelId, mine));
    sameQueue.push(inArray(campaigns.segmentId, sharing));
  }
  const myStart = c.scheduledAt ?? c.createdAt;
  const startOf = sql`coalesce(${campaigns.scheduledAt}, ${campaigns.createdAt})`;
  // One statement: whether a campaign of the same queue goes first, and when the queue's last one lets the next start.
  const blocking = db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(
      and(
        ...sameQueue,
        or(
          // running (a user-paused campaign frees the queue)
          eq(campaigns.status, "sending"),
          and(eq(campaigns.status, "paused"), inArray(campaigns.pauseReason, ["schedule", "channel_offline"])),
          // due before this one (FIFO by start time)
          and(eq(campaigns.status, "pending"), sql`${startOf} <= ${tsParam(now)}`, sql`(${startOf}, ${campaigns.id}) < (${tsParam(myStart)}, ${c.id})`),
        ),
      ),
    )
    .limit(1);
  const ready = db
    .select({ readyAt: max(campaigns.queueReadyAt) })
    .from(campaigns)
    .where(and(...sameQueue));
  const [row] = await db
    .select({ blocked: sql<boolean>`exists (${blocking})`, readyAt: sql<Date | null>`(${ready})`.mapWith(campaigns.queueReadyAt) })
    .from(sql`(select 1) as one`);
  if (row.blocked) return new Date(now.getTime() + recheckMs);
  return row.readyAt && row.readyAt > now ? row.readyAt : null;
}
