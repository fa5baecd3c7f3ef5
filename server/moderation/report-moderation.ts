/**
 * The `group_activity` event `moderation` (docs/webhooks.md): a group's moderation decisions not reported yet, together,
 * at most one event a minute per group (the launches' periodic job calls it). The group's row is locked while its
 * decisions are read and marked, so two processes never report one decision twice and the minute holds.
 */
import { and, asc, eq, isNull, max, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launches, launchGroups, moderationEvents } from "../../db/schema";
import { recordGroupActivity } from "../groups/activity/group-activity";

const minGapMs = 60_000;
/** Decisions per event at most (the rest go in the next one). */
const perEvent = 500;

export async function reportModeration(db: Db, now: Date): Promise<number> {
  const pending = await db
    .selectDistinct({ launchId: moderationEvents.launchId, groupId: moderationEvents.groupId })
    .from(moderationEvents)
    .where(isNull(moderationEvents.reportedAt))
    .limit(1000);
  let made = 0;
  for (const g of pending) {
    const reported = await db.transaction(async (tx) => {
      const [group] = await tx
        .select({ tenantId: launches.tenantId })
        .from(launchGroups)
        .innerJoin(launches, eq(launches.id, launchGroups.launchId))
        .where(and(eq(launchGroups.launchId, g.launchId), eq(launchGroups.groupId, g.groupId)))
        .for("update", { of: launchGroups });
      const ofGroup = and(eq(moderationEvents.launchId, g.launchId), eq(moderationEvents.groupId, g.groupId));
      if (!group) {
        // The group left the launch: its decisions are listed, never reported.
        await tx
          .update(moderationEvents)
          .set({ reportedAt: now })
          .where(and(ofGroup, isNull(moderationEvents.reportedAt)));
        return false;
      }
      const [{ last }] = await tx
        .select({ last: max(moderationEvents.reportedAt) })
        .from(moderationEvents)
        .where(ofGroup);
      if (last !== null && now.getTime() - new Date(last).getTime() < minGapMs) return false;
      const rows = await tx
        .select()
        .from(moderationEvents)
        .where(and(ofGroup, isNull(moderationEvents.reportedAt)))
        .orderBy(asc(moderationEvents.id))
        .limit(perEvent);
      if (rows.length === 0) return false;
      await tx
        .update(moderationEvents)
        .set({ reportedAt: now })
        .where(
          sql`${moderationEvents.id} in (${sql.join(
            rows.map((r) => sql`${r.id}`),
            sql`, `,
          )})`,
        );
      await recordGroupActivity(
        tx,
        group.tenantId,
        {
          event: "moderation",
          id_launch: g.launchId,
          id_group: g.groupId,
          decisions: rows.map((r) => ({ at: r.at.toISOString(), participant: r.participant, rule: r.rule, action: r.action, excerpt: r.excerpt })),
        },
        now,
      );
      return true;
    });
    if (reported) made++;
  }
  return made;
}
