/**
 * One message of a number's budget taken outside a campaign's claim (a launch's welcome; CONTRACT §7 "Budgets"): in the
 * caller's transaction, one conditional UPDATE of the channel row, so two processes never pass a cap or a gap. The same
 * counters as the campaigns' claim (`sent_today` on `usage_day`, `next_send_at`): a welcome counts against
 * `daily_message_cap` and honours `min_send_gap_seconds`, whatever else the number sends.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { tsParam } from "../../db/errors";
import { tableAs } from "../../db/relation";
import { channels } from "../../db/schema";
import { brasiliaDay, dailyCap, effectiveBudget, type NumberHealth } from "./budget";
import { countOnDay } from "./group-creations";
import { markCapped, sendableChannelSql } from "./health";

const channelsRow = tableAs(channels);

/** The channel's cap and least gap in force at `now` (the tenant's number_health under the channel's own limits). */
export function sendBudget(tenant: NumberHealth, channel: Pick<typeof channels.$inferSelect, "limits" | "firstPairedAt">, now: Date) {
  const budget = effectiveBudget(tenant, channel.limits);
  return { cap: dailyCap(budget, channel.firstPairedAt, now).cap, gapMs: Math.round(budget.min_send_gap_seconds * 1000) };
}

/**
 * Takes one send of the channel's day at `now`: true when it can send (connected, in a sending state), is below its cap
 * and past its gap (and the count is now one more, the gap started again); false otherwise. A send that reaches the cap
 * marks the number `capped`.
 */
export async function takeSend(tx: Db | Tx, channelId: string, limit: { cap: number | null; gapMs: number }, now: Date): Promise<boolean> {
  const day = brasiliaDay(now);
  const at = tsParam(now);
  const [row] = await tx
    .update(channels)
    .set({
      usageDay: day,
      sentToday: sql`${countOnDay(channelsRow, "sent_today", day)} + 1`,
      groupsCreatedToday: countOnDay(channelsRow, "groups_created_today", day),
      nextSendAt: limit.gapMs > 0 ? new Date(now.getTime() + limit.gapMs) : sql`${channels.nextSendAt}`,
    })
    .where(
      and(
        eq(channels.id, channelId),
        sendableChannelSql(channelsRow, now),
        limit.cap === null ? undefined : sql`${countOnDay(channelsRow, "sent_today", day)} < ${limit.cap}`,
        sql`(${channels.nextSendAt} is null or ${channels.nextSendAt} <= ${at})`,
      ),
    )
    .returning({ sentToday: channels.sentToday });
  if (!row) return false;
  if (limit.cap !== null && row.sentToday >= limit.cap) await markCapped(tx, channelId, now);
  return true;
}

/** Gives back a send taken at `takenAt` that certainly did not go out (only on the same Brasília day). */
export async function giveBackSend(db: Db | Tx, channelId: string, takenAt: Date) {
  await db
    .update(channels)
    .set({ sentToday: sql`greatest(${channels.sentToday} - 1, 0)` })
    .where(and(eq(channels.id, channelId), eq(channels.usageDay, brasiliaDay(takenAt))));
}
