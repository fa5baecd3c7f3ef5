/**
 * The provider's participant events (join, leave) applied to the launches that hold the group
 * (docs/decisions.md#members): one `launch_participants` row per join (a re-join is a new row), its
 * `left_at` set on leave, the group's `members` moved, the groups re-statused (a group reaching
 * `capacity − margin` becomes full: `group_full`), and the launch engine woken (reserve groups).
 * Events may come twice (a gateway retries its webhook): a join of someone already in, or a second leave,
 * changes nothing.
 */
import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { launches, launchGroups, launchParticipants } from "../../db/schema";
import type { MessagingProvider } from "../messaging/provider";
import { recordGroupActivity } from "./group-activity";
import { staffMatcher } from "./members";
import { applyRestatus } from "./restatus-groups";
import { wakeLaunch } from "./wake";

export interface ParticipantsEvent {
  channelId: string;
  groupId: string;
  action: "join" | "leave";
  participants: string[];
  at: Date;
}

/** Returns the launches touched (their engines were woken). */
export async function recordParticipants(db: Db, provider: Pick<MessagingProvider, "ownNumber">, event: ParticipantsEvent): Promise<string[]> {
  const participants = [...new Set(event.participants.filter((p) => p.length > 0))];
  if (participants.length === 0) return [];
  const held = await db
    .select({
      launchId: launchGroups.launchId,
      tenantId: launches.tenantId,
      staffNumbers: launches.staffNumbers,
      groupTemplate: launches.groupTemplate,
      channelIds: launches.channelIds,
    })
    .from(launchGroups)
    .innerJoin(launches, eq(launches.id, launchGroups.launchId))
    .where(and(eq(launchGroups.channelId, event.channelId), eq(launchGroups.groupId, event.groupId)));
  for (const launch of held) {
    const isStaff = await staffMatcher(provider, launch);
    await db.transaction(async (tx) => {
      // Events of one launch apply one at a time (the launch's row, then the group's).
      await lockLaunch(tx, launch.launchId);
      const [group] = await tx
        .select({ members: launchGroups.members })
        .from(launchGroups)
        .where(and(eq(launchGroups.launchId, launch.launchId), eq(launchGroups.groupId, event.groupId)))
        .for("update");
      if (!group) return;
      const delta =
        event.action === "join"
          ? await recordJoins(tx, launch.launchId, event.groupId, participants, isStaff, event.at)
          : -(await recordLeaves(tx, launch.launchId, event.groupId, participants, event.at));
      if (delta === 0) return;
      await tx
        .update(launchGroups)
        .set({ members: Math.max(0, group.members + delta) })
        .where(and(eq(launchGroups.launchId, launch.launchId), eq(launchGroups.groupId, event.groupId)));
      await applyGroupStatuses(tx, launch.launchId, launch.tenantId, event.at);
    });
  }
  const touched = [...new Set(held.map((l) => l.launchId))];
  for (const id of touched) wakeLaunch(id);
  return touched;
}

const openRows = (launchId: string, groupId: string, participants: string[]) =>
  and(
    eq(launchParticipants.launchId, launchId),
    eq(launchParticipants.groupId, groupId),
    inArray(launchParticipants.participant, participants),
    isNull(launchParticipants.leftAt),
  );

/** New rows for those not already in the group; returns how many joined. */
async function recordJoins(tx: Tx, launchId: string, groupId: string, participants: string[], isStaff: (p: string) => boolean, at: Date) {
  const already = new Set(
    (
      await tx
        .select({ p: launchParticipants.participant })
        .from(launchParticipants)
        .where(openRows(launchId, groupId, participants))
    ).map((r) => r.p),
  );
  const joining = participants.filter((p) => !already.has(p));
  if (joining.length > 0)
    await tx.insert(launchParticipants).values(joining.map((p) => ({ launchId, groupId, participant: p, staff: isStaff(p), joinedAt: at })));
  return joining.length;
}

/**
 * Closes the open rows of those leaving; returns how many left the group. Someone we never saw join (in
 * an adopted group before its adoption, or the channel's own number) still lowers `members`; a second
 * leave of someone whose row is already closed does not.
 */
async function recordLeaves(tx: Tx, launchId: string, groupId: string, participants: string[], at: Date) {
  const closed = await tx
    .update(launchParticipants)
    .set({ leftAt: at })
    .where(openRows(launchId, groupId, participants))
    .returning({ p: launchParticipants.participant });
  const closedSet = new Set(closed.map((r) => r.p));
  const rest = participants.filter((p) => !closedSet.has(p));
  if (rest.length === 0) return closedSet.size;
  const seen = new Set(
    (
      await tx
        .selectDistinct({ p: launchParticipants.participant })
        .from(launchParticipants)
        .where(and(eq(launchParticipants.launchId, launchId), eq(launchParticipants.groupId, groupId), inArray(launchParticipants.participant, rest)))
    ).map((r) => r.p),
  );
  return closedSet.size + rest.filter((p) => !seen.has(p)).length;
}

/**
 * The launch's groups re-statused after their members or states changed (restatus-groups.ts, which locks
 * the launch's row); a group that becomes full gets a `group_full` event.
 */
export async function applyGroupStatuses(tx: Tx, launchId: string, tenantId: string, at: Date) {
  for (const change of await applyRestatus(tx, launchId, at)) {
    if (change.to === "full")
      await recordGroupActivity(tx, tenantId, { event: "group_full", id_launch: launchId, id_group: change.groupId, members: change.members }, at);
  }
}

/** The launch's row first, as applyRestatus and the group additions take it: one lock order, no deadlock. */
export async function lockLaunch(tx: Tx, launchId: string) {
  await tx.select({ id: launches.id }).from(launches).where(eq(launches.id, launchId)).for("update");
}
