import { and, asc, eq } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { launchGroups, launches } from "../../../db/schema";
import { recordGroupActivity } from "../../groups/activity/group-activity";
import { type LaunchGroupStatus, restatus } from "./rotation";

export interface GroupStatusChange {
  groupId: string;
  position: number;
  members: number;
  from: LaunchGroupStatus;
  to: LaunchGroupStatus;
}

/**
 * Brings a launch's group statuses in line with their members (rotation.ts `restatus`): full at
 * capacity − margin (and staying full), the first open group filling, the later ones reserve. Call it
 * inside the transaction that changed members or groups; it locks the launch's row so two such
 * transactions do not interleave. A group becoming full gets its `group_full` event here, whatever made
 * it full (joins, a lower capacity, an adopted group). Returns the changes.
 */
export async function applyRestatus(tx: Db | Tx, launchId: string, now: Date = new Date()): Promise<GroupStatusChange[]> {
  const [launch] = await tx
    .select({ tenantId: launches.tenantId, capacity: launches.capacity, margin: launches.margin })
    .from(launches)
    .where(eq(launches.id, launchId))
    .for("update");
  if (!launch) return [];
  const groups = await tx
    .select({
      groupId: launchGroups.groupId,
      position: launchGroups.position,
      status: launchGroups.status,
      members: launchGroups.members,
      inviteUrl: launchGroups.inviteUrl,
    })
    .from(launchGroups)
    .where(eq(launchGroups.launchId, launchId))
    .orderBy(asc(launchGroups.position));
  const changes = restatus(groups, launch);
  for (const { group, status } of changes) {
    await tx
      .update(launchGroups)
      .set({ status, ...(status === "full" ? { fullAt: now } : {}) })
      .where(and(eq(launchGroups.launchId, launchId), eq(launchGroups.position, group.position)));
    if (status === "full")
      await recordGroupActivity(tx, launch.tenantId, { event: "group_full", id_launch: launchId, id_group: group.groupId, members: group.members }, now);
  }
  return changes.map(({ group, status }) => ({ groupId: group.groupId, position: group.position, members: group.members, from: group.status, to: status }));
}
