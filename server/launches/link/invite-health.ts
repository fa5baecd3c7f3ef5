/**
 * The hourly check of every launch group's invite link (docs/decisions.md#members): the link read from
 * the platform replaces a stored one that was revoked (WhatsApp makes a new code when an admin revokes
 * the old one); a group that vanished, or where the channel's number lost admin, becomes `broken`,
 * leaves the rotation (the next group fills) and a `link_broken` event says why. A channel that cannot
 * answer now (offline, gateway down) is skipped and asked again on the next run.
 *
 * The same read corrects the group: the LID ⇄ phone pairings its participant list carries are learned
 * (the launch's rows of those LIDs move to the numbers), and `members` becomes the platform's own count
 * when they differ and no participant event of the group arrived in the last 10 minutes (events lost,
 * people there before an adoption: without this a drift would last for ever).
 */
import { and, asc, eq, isNull, lt, ne, or, sql } from "drizzle-orm";
import { deleteInBatches } from "../../../db/batched-delete";
import type { Db, Tx } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { launches, launchGroups } from "../../../db/schema";
import { env } from "../../env";
import type { GroupState, MessagingProvider } from "../../messaging/provider";
import { recordGroupActivity } from "../../groups/activity/group-activity";
import { foldAliases, pairsFor, storePairs } from "../../groups/members/lid-phones";
import { touchBuyers } from "../launch/buyers-stamp";
import { lockLaunch, moveMembers } from "../../groups/members/member-counts";
import { staffMatcher } from "../../groups/members/members";
import { eventIdRetentionMs } from "../../groups/members/record-participants";
import { applyRestatus } from "../launch/restatus-groups";
import { wakeLaunch } from "../launch/wake";

export interface InviteCheckResult {
  checked: number;
  renewed: number;
  broken: number;
  skipped: number;
  /** Groups whose `members` was set to the platform's count. */
  corrected: number;
}

/** CONTRACT §6: the platform's count wins only when no event of the group arrived for this long (events may be in flight). */
export const membersQuietMs = 10 * 60_000;

type Checker = Pick<MessagingProvider, "groupState" | "inviteUrl" | "ownNumber">;

/** Checks the groups not checked for LAUNCH_INVITE_CHECK_SECONDS (all of them with `all`), of launches not closed. */
export async function checkInviteLinks(db: Db, provider: Checker, now: Date, opts: { all?: boolean; limit?: number } = {}): Promise<InviteCheckResult> {
  // The ids of participant events past any resend (the hourly pass is the launches' housekeeping).
  const seenCutoff = tsParam(new Date(now.getTime() - eventIdRetentionMs));
  await deleteInBatches(
    db,
    (n) => sql`delete from participant_events_seen where (channel_id, event_id) in (
      select channel_id, event_id from participant_events_seen where seen_at < ${seenCutoff} limit ${n})`,
  );
  const due = new Date(now.getTime() - env.launchFunnel.inviteCheckSeconds * 1000);
  const groups = await db
    .select({
      launchId: launchGroups.launchId,
      tenantId: launches.tenantId,
      position: launchGroups.position,
      groupId: launchGroups.groupId,
      channelId: launchGroups.channelId,
      inviteUrl: launchGroups.inviteUrl,
      staffNumbers: launches.staffNumbers,
      groupTemplate: launches.groupTemplate,
      channelIds: launches.channelIds,
    })
    .from(launchGroups)
    .innerJoin(launches, eq(launches.id, launchGroups.launchId))
    .where(
      and(
        ne(launches.status, "closed"),
        ne(launchGroups.status, "broken"),
        opts.all ? undefined : or(isNull(launchGroups.inviteCheckedAt), lt(launchGroups.inviteCheckedAt, due)),
      ),
    )
    // Never-checked groups first, then the longest unchecked.
    .orderBy(sql`${launchGroups.inviteCheckedAt} asc nulls first`, asc(launchGroups.launchId), asc(launchGroups.position))
    .limit(opts.limit ?? 500);
  const result: InviteCheckResult = { checked: 0, renewed: 0, broken: 0, skipped: 0, corrected: 0 };
  for (const g of groups) {
    const where = and(eq(launchGroups.launchId, g.launchId), eq(launchGroups.position, g.position));
    let state: Awaited<ReturnType<Checker["groupState"]>>;
    let url: string | null = null;
    try {
      state = await provider.groupState(g.channelId, g.groupId);
      if (state.exists && state.admin) url = await provider.inviteUrl(g.channelId, g.groupId);
    } catch (err) {
      console.warn(`[launches] invite check of ${g.groupId} skipped:`, err instanceof Error ? err.message : err);
      result.skipped++;
      continue;
    }
    result.checked++;
    if (!state.exists || !state.admin) {
      const reason = state.exists ? "not_admin" : "group_gone";
      await db.transaction(async (tx) => {
        await lockLaunch(tx, g.launchId);
        const [marked] = await tx
          .update(launchGroups)
          .set({ status: "broken", brokenReason: reason, inviteCheckedAt: now })
          .where(and(where, ne(launchGroups.status, "broken")))
          .returning({ p: launchGroups.position });
        if (!marked) return;
        await recordGroupActivity(tx, g.tenantId, { event: "link_broken", id_launch: g.launchId, id_group: g.groupId, reason }, now);
        await applyRestatus(tx, g.launchId, now);
      });
      result.broken++;
      wakeLaunch(g.launchId);
      continue;
    }
    const renewed = url !== null && url !== g.inviteUrl;
    if (state.pairs?.length) await storePairs(db, g.channelId, state.pairs, now);
    const corrected = await db.transaction(async (tx) => {
      await lockLaunch(tx, g.launchId);
      await tx
        .update(launchGroups)
        .set(renewed ? { inviteUrl: url, inviteCheckedAt: now } : { inviteCheckedAt: now })
        .where(where);
      if (state.pairs?.length) await learnFromList(tx, provider, g, state.pairs, now);
      return correctMembers(tx, g, state, now);
    });
    if (renewed) result.renewed++;
    if (corrected) {
      result.corrected++;
      wakeLaunch(g.launchId);
    }
  }
  return result;
}

type CheckedGroup = { launchId: string; position: number; groupId: string; channelId: string } & Parameters<typeof staffMatcher>[1];

/** The launch's rows of the list's LIDs moved to their numbers (inside the launch's lock). */
async function learnFromList(tx: Tx, provider: Checker, g: CheckedGroup, pairs: NonNullable<GroupState["pairs"]>, now: Date) {
  const known = await pairsFor(
    tx,
    new Map([[g.launchId, g.channelIds]]),
    pairs.map((p) => p.lid),
  );
  const isStaff = await staffMatcher(provider, g);
  const moved = await moveMembers(tx, await foldAliases(tx, known, (_, p) => isStaff(p)));
  // Rows moved to their number (and their staff flag with them): buyers_in_groups is counted again.
  await touchBuyers(tx, [g.launchId]);
  if (moved.length > 0) await applyRestatus(tx, g.launchId, now);
}

/** `members` := the platform's count, when they differ and the group had no event for `membersQuietMs`. */
async function correctMembers(tx: Tx, g: CheckedGroup, state: GroupState, now: Date): Promise<boolean> {
  const [row] = await tx
    .select({ members: launchGroups.members, lastEventAt: launchGroups.lastEventAt })
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, g.launchId), eq(launchGroups.position, g.position)));
  if (!row || row.members === state.size) return false;
  if (row.lastEventAt && now.getTime() - row.lastEventAt.getTime() < membersQuietMs) return false;
  await tx
    .update(launchGroups)
    .set({ members: state.size })
    .where(and(eq(launchGroups.launchId, g.launchId), eq(launchGroups.position, g.position)));
  console.info(`[launches] ${g.groupId}: members ${row.members} → ${state.size} (the platform's count)`);
  await applyRestatus(tx, g.launchId, now);
  return true;
}
