import { asc, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { groupActionGroups, groupActions, launches, segmentGroups } from "../../../db/schema";

/** The segment whose groups a target means: the segment itself, or the launch's (it always holds all the launch's groups). */
export async function targetSegmentId(db: Db | Tx, target: { segmentId: string | null; launchId: string | null }): Promise<string> {
  if (target.segmentId) return target.segmentId;
  const [launch] = await db
    .select({ segmentId: launches.segmentId })
    .from(launches)
    .where(eq(launches.id, target.launchId as string));
  return launch.segmentId;
}

/**
 * The target's groups, in order, with `{n}`: the 1-based position in the segment (a launch's segment holds its groups at
 * their number in the launch minus one, so it is the group's number in the launch).
 */
export async function targetGroups(db: Db | Tx, segmentId: string) {
  const rows = await db
    .select({ groupId: segmentGroups.groupId, position: segmentGroups.position })
    .from(segmentGroups)
    .where(eq(segmentGroups.segmentId, segmentId))
    .orderBy(asc(segmentGroups.position));
  return rows.map((r) => ({ groupId: r.groupId, position: r.position + 1 }));
}

/**
 * Adds the target's groups the action does not hold yet (a launch's groups made after it was scheduled) and sets its
 * total; answers the total.
 */
export async function addTargetGroups(tx: Tx, actionId: string, segmentId: string): Promise<number> {
  const groups = await targetGroups(tx, segmentId);
  for (let i = 0; i < groups.length; i += 500) {
    await tx
      .insert(groupActionGroups)
      .values(groups.slice(i, i + 500).map((g) => ({ actionId, groupId: g.groupId, position: g.position })))
      .onConflictDoNothing();
  }
  const [row] = await tx
    .update(groupActions)
    .set({ total: sql`(select count(*)::int from ${groupActionGroups} where ${groupActionGroups.actionId} = ${actionId})` })
    .where(eq(groupActions.id, actionId))
    .returning({ total: groupActions.total });
  return row.total;
}
