/**
 * A number's group creations (CONTRACT §7 "Budgets" `group_create_cap`, "Launches on several numbers";
 * docs/launches.md#several-numbers): whether a channel may create a group now, and its day's count, taken
 * atomically before each creation and given back when the platform certainly made nothing. Written for the
 * launch engine (server/launches/launch/group-creators.ts uses it); the counters are the channel's own
 * (`usage_day`, `groups_created_today`, beside the dispatch's `sent_today`).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import type { Bind } from "../../db/params";
import { tableAs, type Relation } from "../../db/relation";
import { channels } from "../../db/schema";
import { brasiliaDay, effectiveBudget } from "./budget";
import type { HealthState } from "./health";
import { tenantNumberHealth } from "./health-view";

/**
 * After the platform answered a number rate-limited (a creation or a send: `rate_limited_at`), that number
 * creates no group for this long (CONTRACT §7: "at least 1 h after a rate-limit answer").
 */
export const groupCreatePauseAfterRateLimitMs = 60 * 60 * 1000;

/** States in which a number cannot act on groups (they end only with a new pairing, or when the platform lifts them). */
const outOfAction: readonly HealthState[] = ["restricted", "logged_out", "banned"];

/**
 * Why a channel may not create a group now; null: it may. `backoff`: a creation through it failed and waits
 * (its `create_retry_at`, set with the failing launch's backoff).
 */
export type CreateBlock = "offline" | "health" | "rate_limited" | "backoff" | "group_create_cap";

export interface GroupCreator {
  channelId: string;
  /** The channel's own number (null until paired, or when the provider has not told it yet). */
  phone: string | null;
  healthState: HealthState;
  /** Groups it created on today's Brasília day. */
  createdToday: number;
  /** Its `group_create_cap` (the tenant's, or its own `limits`). */
  cap: number;
  /** Why it may not create now; null: it may. */
  block: CreateBlock | null;
  /** Until when a failed creation through it holds its creations back (block `backoff`). */
  retryAt: Date | null;
}

/**
 * The channels' creation standing at `now`, in the order given (unknown or other tenants' ids are left out).
 * A channel creates when it is connected, not restricted/banned/logged_out, not cooling, no rate-limit
 * answer came within the hour, no failed creation through it is waiting (`create_retry_at`), and its day's
 * count is below its cap. `capped` (the day's messages) does not
 * stop creations: a creation is not a message.
 */
export async function groupCreators(db: Db | Tx, tenantId: string, channelIds: string[], now: Date): Promise<GroupCreator[]> {
  if (channelIds.length === 0) return [];
  const tenant = await tenantNumberHealth(db, tenantId);
  const rows = await db
    .select()
    .from(channels)
    .where(and(eq(channels.tenantId, tenantId), inArray(channels.id, channelIds)));
  const today = brasiliaDay(now);
  return channelIds.flatMap((id) => {
    const c = rows.find((r) => r.id === id);
    if (!c) return [];
    const cap = effectiveBudget(tenant, c.limits).group_create_cap;
    const createdToday = c.usageDay === today ? c.groupsCreatedToday : 0;
    const cooling = c.healthState === "cooling" && c.healthUntil !== null && c.healthUntil > now;
    const rateLimited = c.rateLimitedAt !== null && now.getTime() - c.rateLimitedAt.getTime() < groupCreatePauseAfterRateLimitMs;
    const block: CreateBlock | null =
      c.status !== "connected"
        ? "offline"
        : outOfAction.includes(c.healthState)
          ? "health"
          : cooling || rateLimited
            ? "rate_limited"
            : c.createRetryAt !== null && c.createRetryAt > now
              ? "backoff"
              : createdToday >= cap
                ? "group_create_cap"
                : null;
    return [{ channelId: id, phone: c.phone, healthState: c.healthState, createdToday, cap, block, retryAt: c.createRetryAt }];
  });
}

/**
 * A day counter of the channel row `channel` (`channels` itself, or an alias: tableAs) as of the Brasília `day`: another day's
 * count reads 0. Every UPDATE that moves `usage_day` to `day` writes both counters through it (the claim counts
 * sends, takeGroupCreation creations), so a new day starts both: without it, a number's first send of the day
 * carried yesterday's creations into today, against its `group_create_cap`.
 */
export const countOnDay = (channel: Relation<"usage_day" | CountOnDay>, counter: CountOnDay, day: Bind<string>) =>
  sql`(case when ${channel.col("usage_day")} = ${day} then ${channel.col(counter)} else 0 end)`;

type CountOnDay = "sent_today" | "groups_created_today";
const channelsRow = tableAs(channels);

/**
 * Takes one of the channel's creations for today, in one conditional UPDATE: true when the count was below
 * `cap` (and is now one more), false when the cap is reached. Two processes never pass the cap: the second
 * UPDATE waits for the first's row lock and re-checks its condition on the row the first wrote. A new
 * Brasília day starts both of the channel's counters again.
 */
export async function takeGroupCreation(db: Db | Tx, channelId: string, cap: number, now: Date): Promise<boolean> {
  const day = brasiliaDay(now);
  const rows = await db
    .update(channels)
    .set({
      usageDay: day,
      groupsCreatedToday: sql`${countOnDay(channelsRow, "groups_created_today", day)} + 1`,
      sentToday: countOnDay(channelsRow, "sent_today", day),
    })
    .where(and(eq(channels.id, channelId), sql`${countOnDay(channelsRow, "groups_created_today", day)} < ${cap}`))
    .returning({ id: channels.id });
  return rows.length > 0;
}

/** Gives back a creation taken at `takenAt` that the platform certainly did not make (only on the same Brasília day). */
export async function giveBackGroupCreation(db: Db | Tx, channelId: string, takenAt: Date) {
  await db
    .update(channels)
    .set({ groupsCreatedToday: sql`greatest(${channels.groupsCreatedToday} - 1, 0)` })
    .where(and(eq(channels.id, channelId), eq(channels.usageDay, brasiliaDay(takenAt))));
}
