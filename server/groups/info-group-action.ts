import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { groupActionGroups } from "../../db/schema";
import { toBrasiliaIso } from "../time/brasilia";
import { findGroupAction } from "./find-group-action";
import { groupActionView } from "./group-action-view";

/** An action and each group's result, in the target's order (a group being applied shows as pending). */
export async function infoGroupAction(db: Db, tenantId: string, actionId: string) {
  const a = await findGroupAction(db, tenantId, actionId);
  const rows = await db.select().from(groupActionGroups).where(eq(groupActionGroups.actionId, a.id)).orderBy(asc(groupActionGroups.position));
  return {
    ...groupActionView(a),
    results: rows.map((r) => ({
      id_group: r.groupId,
      id_channel: r.channelId,
      state: r.state === "applying" ? ("pending" as const) : r.state,
      reason: r.reason,
      at: r.at ? toBrasiliaIso(r.at) : null,
    })),
  };
}
