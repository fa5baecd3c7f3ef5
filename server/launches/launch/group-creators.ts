/**
 * Who creates a launch's next group, and what a failed creation costs (CONTRACT §7 "Launches on several
 * numbers"; docs/launches.md#several-numbers). The launch's channels take turns — the one after the channel
 * that created the launch's latest group, in `id_channel` order — skipping those that may not create now
 * (server/numbers/group-creations.ts: offline, out of action, rate-limited within the hour, at their
 * `group_create_cap`). A creation whose outcome is unknown pins the launch to its channel until it is settled.
 * A failure puts the launch's creations off: 5 min, doubling with each failure in a row, at most 1 h; at least
 * 1 h after a rate-limit answer; and the number's too (unless the platform refused the request itself: a
 * template it will not take is the launch's fault, not the number's). Every creation — the engine's,
 * launch-groups', create-launch's — goes through createTemplateGroupsLocked (add-groups.ts), which asks
 * `creationsWait` for the launch and `launchCreators` for its numbers: a backoff holds them all.
 */
import { and, desc, eq, isNotNull, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { channels, launches, launchGroups } from "../../../db/schema";
import { RateLimited, Unavailable } from "../../errors";
import { groupCreators, type CreateBlock, type GroupCreator } from "../../numbers/group-creations";
import { brasiliaDay, nextBrasiliaMidnight } from "../../numbers/budget";
import type { Launch } from "./find-launch";

/** The backoff of a launch's creations after failures in a row (CONTRACT §7). */
export const createBackoff = {
  firstMs: 5 * 60_000,
  maxMs: 60 * 60_000,
  /** After the platform throttled a creation (a rate-limit answer), whatever the count. */
  afterRateLimitMs: 60 * 60_000,
} as const;

/** Until when the launch's creations wait (its backoff), or null when they may be tried at `now`. */
export const creationsWait = (launch: Pick<Launch, "createRetryAt">, now: Date) =>
  launch.createRetryAt !== null && launch.createRetryAt > now ? launch.createRetryAt : null;

/** A request that asked for groups while the launch's (or its numbers') creations wait: 503 `group_create_backoff`. */
export function backoffError(until: Date, whose: string) {
  return new Unavailable(
    `${whose} last group creation failed: no group is created before ${until.toISOString()} (5 min after a failure, doubling to 1 h; ` +
      "1 h after a rate-limit answer). Nothing was made; ask again then.",
    "group_create_backoff",
  );
}

/** How long the launch waits after its `failures`-th failure in a row (1-based). */
export function backoffMs(failures: number, rateLimited: boolean): number {
  const doubling = Math.min(createBackoff.maxMs, createBackoff.firstMs * 2 ** Math.max(0, Math.min(failures - 1, 20)));
  return rateLimited ? Math.max(doubling, createBackoff.afterRateLimitMs) : doubling;
}

type LaunchRef = Pick<Launch, "tenantId" | "channelIds"> & Partial<Pick<Launch, "id" | "createChannelId">>;

export interface Creators {
  /** The channels that may create now, in turn (the first one creates next). */
  able: GroupCreator[];
  /** Every channel of the launch with its standing (the others are added to each group it makes). */
  all: GroupCreator[];
}

/** The launch's channels at `now`: who may create, in turn. */
export async function launchCreators(db: Db | Tx, launch: LaunchRef, now: Date): Promise<Creators> {
  const all = await groupCreators(db, launch.tenantId, launch.channelIds, now);
  const pinned = launch.createChannelId ? all.find((c) => c.channelId === launch.createChannelId) : undefined;
  // A pinned channel taken off by the platform may never settle its creation: the launch goes on without it.
  if (pinned && pinned.block !== "health") return { able: pinned.block === null ? [pinned] : [], all };
  const last = launch.id ? await lastCreator(db, launch.id) : null;
  const start = last ? launch.channelIds.indexOf(last) + 1 : 0;
  const turn = [...launch.channelIds.slice(start), ...launch.channelIds.slice(0, start)];
  const able = turn.flatMap((id) => all.filter((c) => c.channelId === id && c.block === null));
  return { able, all };
}

/** The channel that created the launch's latest group made from the template, or null. */
async function lastCreator(db: Db | Tx, launchId: string): Promise<string | null> {
  const [row] = await db
    .select({ channelId: launchGroups.channelId })
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, launchId), eq(launchGroups.adopted, false)))
    .orderBy(desc(launchGroups.position))
    .limit(1);
  return row?.channelId ?? null;
}

/** Why none of the launch's channels may create: its cap first (the one reason that lasts till midnight), then a rate limit, a backoff, then offline. */
export function whyNoCreator(all: readonly GroupCreator[]): CreateBlock {
  const blocks = new Set(all.map((c) => c.block));
  if (blocks.has("group_create_cap")) return "group_create_cap";
  if (blocks.has("rate_limited")) return "rate_limited";
  if (blocks.has("backoff")) return "backoff";
  return all.some((c) => c.block === "health") && !blocks.has("offline") ? "health" : "offline";
}

/**
 * What a request that asked for groups gets when no channel may create now: the day's cap is the tenant's own
 * quota (429 with Retry-After until 00:00 in Brasília); the others are the platform's or the numbers' state (503).
 */
export function noCreatorError(all: readonly GroupCreator[], now: Date): Unavailable | RateLimited {
  switch (whyNoCreator(all)) {
    case "group_create_cap": {
      const caps = all.filter((c) => c.block === "group_create_cap").map((c) => `${c.channelId} ${c.createdToday}/${c.cap}`);
      const midnight = nextBrasiliaMidnight(now);
      return new RateLimited(
        `Every channel of the launch that can create groups has reached its group_create_cap for ${brasiliaDay(now)} (${caps.join(", ")}); ` +
          `creations start again at ${midnight.toISOString()} (00:00 in Brasília).`,
        Math.max(1, Math.ceil((midnight.getTime() - now.getTime()) / 1000)),
        "group_create_cap",
      );
    }
    case "rate_limited":
      return new Unavailable(
        "WhatsApp throttled the launch's channels within the last hour: no group is created on them until an hour has passed.",
        "group_create_rate_limited",
      );
    case "backoff": {
      const until = Math.min(...all.flatMap((c) => (c.block === "backoff" && c.retryAt ? [c.retryAt.getTime()] : [])));
      return backoffError(new Date(until), "The launch's channels' (id_channel)");
    }
    case "health":
      return new Unavailable("The launch's channels (id_channel) were restricted, banned or logged out by the platform: pair them again.", "channel_offline");
    default:
      return new Unavailable("None of the launch's channels (id_channel) is connected: no group can be created now.", "channel_offline");
  }
}

/**
 * A creation failed (nothing made, or not known yet): the launch's creations wait (`create_retry_at`), and so
 * do the number's (`channels.create_retry_at`, for every launch) unless the platform `refused` the request
 * itself; a creation whose outcome is unknown pins the launch to `channelId` (the next attempt looks its group up).
 */
export async function recordCreateFailure(
  db: Db | Tx,
  launchId: string,
  channelId: string,
  outcome: { unknown: boolean; rateLimited: boolean; refused?: boolean },
  now: Date,
) {
  const [row] = await db
    .update(launches)
    .set({ createFailures: sql`${launches.createFailures} + 1`, createChannelId: outcome.unknown ? channelId : null })
    .where(eq(launches.id, launchId))
    .returning({ failures: launches.createFailures });
  if (!row) return null;
  const retryAt = new Date(now.getTime() + backoffMs(row.failures, outcome.rateLimited));
  await db.update(launches).set({ createRetryAt: retryAt }).where(eq(launches.id, launchId));
  if (!outcome.refused) {
    await db
      .update(channels)
      .set({ createRetryAt: sql`greatest(coalesce(${channels.createRetryAt}, ${tsParam(retryAt)}), ${tsParam(retryAt)})` })
      .where(eq(channels.id, channelId));
  }
  return retryAt;
}

/**
 * A group was made through `channelId`: the launch's failures in a row end, and the number's wait (a creation
 * the platform throttled while making it still waits an hour: the number's rate limit says so).
 */
export async function recordCreateSuccess(db: Db | Tx, launchId: string, channelId: string, rateLimited: boolean, now: Date) {
  await db
    .update(launches)
    .set({ createFailures: 0, createChannelId: null, createRetryAt: rateLimited ? new Date(now.getTime() + createBackoff.afterRateLimitMs) : null })
    .where(eq(launches.id, launchId));
  await db
    .update(channels)
    .set({ createRetryAt: null })
    .where(and(eq(channels.id, channelId), isNotNull(channels.createRetryAt)));
}
