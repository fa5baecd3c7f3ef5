import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { channels, groupActionGroups, segmentGroups } from "../../../db/schema";
import { toBrasiliaIso } from "../../time/brasilia";
import { findGroupAction } from "./find-group-action";
import { groupActionView } from "./group-action-view";
import { targetSegmentId } from "./target-groups";

/**
 * An action and each group's result, in the target's order (a group being applied shows as pending), with the group's
 * name and `{n}` as the target's segment holds them and the number (channel) that applied it: what the dashboard's page
 * of the action shows.
 */
export async function infoGroupAction(db: Db, tenantId: string, actionId: string) {
  const a = await findGroupAction(db, tenantId, actionId);
  const segmentId = await targetSegmentId(db, a);
  const rows = await db
    .select({ g: groupActionGroups, groupName: segmentGroups.name, channelName: channels.name, phone: channels.phone })
    .from(groupActionGroups)
    .leftJoin(segmentGroups, and(eq(segmentGroups.segmentId, segmentId), eq(segmentGroups.groupId, groupActionGroups.groupId)))
    .leftJoin(channels, eq(channels.id, groupActionGroups.channelId))
    .where(eq(groupActionGroups.actionId, a.id))
    .orderBy(asc(groupActionGroups.position));
  return {
    ...groupActionView(a),
    results: rows.map(({ g, groupName, channelName, phone }) => ({
      id_group: g.groupId,
      group_name: groupName,
      position: g.position,
      id_channel: g.channelId,
      channel_name: channelName,
      phone,
      state: g.state === "applying" ? ("pending" as const) : g.state,
      reason: g.reason,
      at: g.at ? toBrasiliaIso(g.at) : null,
    })),
  };
}
