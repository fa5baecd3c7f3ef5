/**
 * Reach is what the platform says (CONTRACT §7 "One group, several channels"; docs/launches.md#several-numbers):
 * a launch channel reaches one of the launch's groups only once the platform lists its number there (an admin
 * where only admins post). After a creation, an add or a promotion, each number's outcome is read from the
 * platform's per-participant answer; one the answer cannot tell is read back (the group as that number sees it).
 * A number that is not in (refused, dropped, not promoted where it must be, or found out by a send refused as
 * "not in the group") is recorded in launch_group_joins, shown with the group (info-launch, the dashboard) and
 * added and promoted again by the launch pass: 5 min after, doubling to 1 h, at most `maxAttempts` times.
 */
import { and, eq, inArray, lte, ne, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { channels, launches, launchGroupJoins, launchGroups, segmentGroupChannels } from "../../../db/schema";
import { type MessagingProvider, type ParticipantOutcome, ProviderUnavailableError } from "../../messaging/provider";
import { addGroupReach } from "../../segments/group-reach";

/** The retries of a number that is not in a launch group. */
export const groupJoinRetry = {
  firstMs: 5 * 60_000,
  maxMs: 60 * 60_000,
  /** Adds tried again after the first failure; then the number stays out until someone acts (shown as failed). */
  maxAttempts: 8,
  /** Rows one pass takes (the platform is asked once per row, one after the other). */
  batch: 20,
} as const;

/** The wait before retry number `attempt + 1` (attempt 0: the first retry, 5 min after the failure). */
export const joinRetryMs = (attempt: number) => Math.min(groupJoinRetry.maxMs, groupJoinRetry.firstMs * 2 ** Math.max(0, Math.min(attempt, 20)));

export interface LaunchNumber {
  channelId: string;
  phone: string;
}

export interface Reach {
  /** The channels the platform lists in the group (admins where only admins post). */
  reaching: string[];
  /** The others, each with why. */
  missing: { channelId: string; reason: string }[];
}

/**
 * Which of `numbers` reach the group, from the platform's outcomes for them (`outcomes`: a creation's list, an
 * add and promotion's answer). A number the outcomes do not settle is read back: the group as that number's own
 * channel sees it (`groupState`); when that cannot be asked now it is `unconfirmed` (not counted in; retried).
 */
export async function confirmReach(
  provider: Pick<MessagingProvider, "groupState">,
  groupId: string,
  adminsOnly: boolean,
  numbers: LaunchNumber[],
  outcomes: ParticipantOutcome[] | null,
): Promise<Reach> {
  const reach: Reach = { reaching: [], missing: [] };
  for (const n of numbers) {
    const o = outcomes?.find((x) => x.phone === n.phone);
    if (o?.state === "admin" || (o?.state === "member" && !adminsOnly)) {
      reach.reaching.push(n.channelId);
      continue;
    }
    if (o?.state === "absent") {
      reach.missing.push({ channelId: n.channelId, reason: o.reason ?? "not_added" });
      continue;
    }
    // Not told, or a member not promoted where only admins post: the group as this number sees it now.
    const seen = await provider.groupState(n.channelId, groupId).catch(() => null);
    if (!seen) reach.missing.push({ channelId: n.channelId, reason: "unconfirmed" });
    else if (!seen.exists) reach.missing.push({ channelId: n.channelId, reason: o?.reason ?? "not_in_group" });
    else if (seen.admin || !adminsOnly) reach.reaching.push(n.channelId);
    else reach.missing.push({ channelId: n.channelId, reason: "not_admin" });
  }
  return reach;
}

/** Records the numbers that are not in the group, their first retry `firstMs` from now (inside the caller's transaction). */
export async function recordMissing(db: Db | Tx, launchId: string, groupId: string, missing: Reach["missing"], now: Date) {
  if (missing.length === 0) return;
  await db
    .insert(launchGroupJoins)
    .values(
      missing.map((m) => ({ launchId, groupId, channelId: m.channelId, reason: m.reason, since: now, retryAt: new Date(now.getTime() + joinRetryMs(0)) })),
    )
    .onConflictDoNothing();
}

/**
 * The launch pass's retries (launch-engine.ts): each number due is added and promoted again through a channel
 * of the launch that reaches the group, and its reach recorded when the platform lists it; otherwise its next
 * attempt waits twice as long (at most 1 h), and after `maxAttempts` none is made. Each row is taken by pushing
 * its `retry_at` forward in the statement that picks it, so two processes never add the same number at once.
 * Returns how many numbers now reach their group.
 */
export async function retryGroupJoins(db: Db, provider: MessagingProvider, now: Date, launchId?: string): Promise<number> {
  const at = tsParam(now);
  const held = new Date(now.getTime() + groupJoinRetry.firstMs);
  const due = await db
    .update(launchGroupJoins)
    .set({ retryAt: held })
    .where(
      and(
        lte(launchGroupJoins.retryAt, at),
        launchId ? eq(launchGroupJoins.launchId, launchId) : undefined,
        sql`(${launchGroupJoins.launchId}, ${launchGroupJoins.groupId}, ${launchGroupJoins.channelId}) in (
          select j.launch_id, j.id_group, j.channel_id from ${launchGroupJoins} j join ${launches} l on l.id = j.launch_id
          where j.retry_at <= ${at} and l.status <> 'closed' order by j.retry_at limit ${groupJoinRetry.batch})`,
      ),
    )
    .returning();
  let joined = 0;
  for (const row of due) {
    try {
      if (await retryOne(db, provider, row, now)) joined++;
    } catch (err) {
      console.error(`[launches] retrying ${row.channelId} in ${row.groupId} failed`, err instanceof Error ? err.message : err);
    }
  }
  return joined;
}

type JoinRow = typeof launchGroupJoins.$inferSelect;

async function retryOne(db: Db, provider: MessagingProvider, row: JoinRow, now: Date): Promise<boolean> {
  const [launch] = await db.select().from(launches).where(eq(launches.id, row.launchId));
  const [group] = await db
    .select()
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, row.launchId), eq(launchGroups.groupId, row.groupId)));
  // The group left the launch, or the channel did: nothing to join.
  if (!launch || !group || !launch.channelIds.includes(row.channelId)) {
    await dropMissing(db, row);
    return false;
  }
  const [channel] = await db.select({ phone: channels.phone }).from(channels).where(eq(channels.id, row.channelId));
  const phone = channel?.phone ?? (await provider.ownNumber(row.channelId).catch(() => null));
  if (!phone) return failAgain(db, row, "no_number", now, true);
  // Who adds it: the group's channel first, then the launch's other channels that reach the group.
  const reaching = await db
    .select({ channelId: segmentGroupChannels.channelId })
    .from(segmentGroupChannels)
    .where(
      and(
        eq(segmentGroupChannels.segmentId, launch.segmentId),
        eq(segmentGroupChannels.groupId, row.groupId),
        ne(segmentGroupChannels.channelId, row.channelId),
        inArray(segmentGroupChannels.channelId, launch.channelIds),
      ),
    );
  const actors = [...new Set([group.channelId, ...reaching.map((r) => r.channelId)])].filter((c) => c !== row.channelId);
  const adminsOnly = launch.groupTemplate.admins_only;
  for (const actor of actors) {
    let outcomes: ParticipantOutcome[];
    try {
      outcomes = await provider.promoteParticipants(actor, row.groupId, [phone]);
    } catch (err) {
      // This channel cannot act now (offline): the next one may; a refusal of the call itself is this attempt's answer.
      if (err instanceof ProviderUnavailableError) continue;
      return failAgain(db, row, (err instanceof Error ? err.message : String(err)).slice(0, 200), now, true);
    }
    const reach = await confirmReach(provider, row.groupId, adminsOnly, [{ channelId: row.channelId, phone }], outcomes);
    if (reach.reaching.length === 0) return failAgain(db, row, reach.missing[0]?.reason ?? "not_added", now, true);
    await db.transaction(async (tx) => {
      await addGroupReach(tx, launch.segmentId, row.groupId, [row.channelId]);
      await dropMissing(tx, row);
    });
    console.log(`[launches] launch ${row.launchId}: ${row.channelId} is in ${row.groupId} now (attempt ${row.attempts + 1})`);
    return true;
  }
  // No channel could ask the platform: not an attempt; asked again later.
  await db
    .update(launchGroupJoins)
    .set({ retryAt: new Date(now.getTime() + groupJoinRetry.firstMs) })
    .where(rowKey(row));
  return false;
}

const rowKey = (row: JoinRow) =>
  and(eq(launchGroupJoins.launchId, row.launchId), eq(launchGroupJoins.groupId, row.groupId), eq(launchGroupJoins.channelId, row.channelId));

async function dropMissing(db: Db | Tx, row: JoinRow) {
  await db.delete(launchGroupJoins).where(rowKey(row));
}

/** One more failed attempt: the next one waits twice as long (at most 1 h); after the last, none. */
async function failAgain(db: Db, row: JoinRow, reason: string, now: Date, asked: boolean): Promise<false> {
  const attempts = row.attempts + (asked ? 1 : 0);
  const retryAt = attempts >= groupJoinRetry.maxAttempts ? null : new Date(now.getTime() + joinRetryMs(attempts));
  await db.update(launchGroupJoins).set({ attempts, reason, retryAt }).where(rowKey(row));
  return false;
}
