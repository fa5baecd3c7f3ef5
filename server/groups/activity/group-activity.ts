/**
 * The `group_activity` webhook (docs/decisions.md#the-group_activity-webhook): what happened to a launch's
 * groups, written to the outbox in the transaction of the change. `members_changed` is batched: the joins
 * and leaves not yet reported go out together, at most once per group per LAUNCH_MEMBERS_REPORT_SECONDS.
 */
import { and, asc, eq, inArray, isNotNull, isNull, or, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { launches, launchGroups, launchParticipants } from "../../../db/schema";
import { env } from "../../env";
import { recordEvent } from "../../outbox/record-event";
import type { GroupActivity, ParticipantChange } from "../../webhooks/events";

/** Call inside the transaction of the change (as recordEvent). */
export function recordGroupActivity(tx: Db | Tx, tenantId: string, activity: GroupActivity, at: Date) {
  return recordEvent(tx, tenantId, "group_activity", activity, at);
}

/** Joins and leaves not yet in a `members_changed` event. */
const unreported = or(isNull(launchParticipants.joinReportedAt), and(isNotNull(launchParticipants.leftAt), isNull(launchParticipants.leaveReportedAt)));

/**
 * One `members_changed` event per group that has unreported joins or leaves and whose last event is at
 * least LAUNCH_MEMBERS_REPORT_SECONDS old. The group's row is locked while its rows are read and marked,
 * so two processes never report the same change and the minute holds. Returns the events made.
 */
export async function reportMembersChanged(db: Db, now: Date): Promise<number> {
  const minGapMs = env.launchFunnel.membersReportSeconds * 1000;
  const pending = await db
    .selectDistinct({ launchId: launchParticipants.launchId, groupId: launchParticipants.groupId })
    .from(launchParticipants)
    .where(unreported)
    .limit(1000);
  let made = 0;
  for (const g of pending) {
    const reported = await db.transaction(async (tx) => {
      const [group] = await tx
        .select({ members: launchGroups.members, tenantId: launches.tenantId })
        .from(launchGroups)
        .innerJoin(launches, eq(launches.id, launchGroups.launchId))
        .where(and(eq(launchGroups.launchId, g.launchId), eq(launchGroups.groupId, g.groupId)))
        .for("update", { of: launchGroups });
      if (!group) return false;
      const [{ last }] = await tx
        .select({
          last: sql<string | null>`max(greatest(${launchParticipants.joinReportedAt}, ${launchParticipants.leaveReportedAt}))`,
        })
        .from(launchParticipants)
        .where(and(eq(launchParticipants.launchId, g.launchId), eq(launchParticipants.groupId, g.groupId)));
      if (last !== null && now.getTime() - new Date(last).getTime() < minGapMs) return false;
      const rows = await tx
        .select()
        .from(launchParticipants)
        .where(and(eq(launchParticipants.launchId, g.launchId), eq(launchParticipants.groupId, g.groupId), unreported))
        .orderBy(asc(launchParticipants.id));
      if (rows.length === 0) return false;
      const joins = rows.filter((r) => r.joinReportedAt === null);
      const leaves = rows.filter((r) => r.leftAt !== null && r.leaveReportedAt === null);
      const change = (r: (typeof rows)[number]): ParticipantChange => ({ participant: r.participant, staff: r.staff });
      if (joins.length > 0)
        await tx
          .update(launchParticipants)
          .set({ joinReportedAt: now })
          .where(
            inArray(
              launchParticipants.id,
              joins.map((r) => r.id),
            ),
          );
      if (leaves.length > 0)
        await tx
          .update(launchParticipants)
          .set({ leaveReportedAt: now })
          .where(
            inArray(
              launchParticipants.id,
              leaves.map((r) => r.id),
            ),
          );
      await recordGroupActivity(
        tx,
        group.tenantId,
        { event: "members_changed", id_launch: g.launchId, id_group: g.groupId, joined: joins.map(change), left: leaves.map(change), members: group.members },
        now,
      );
      return true;
    });
    if (reported) made++;
  }
  return made;
}
