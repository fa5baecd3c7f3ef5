import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { groupActionGroups, groupActions } from "../../../db/schema";
import { Conflict } from "../../errors";
import { recordActionStatus } from "./action-events";
import { findGroupAction } from "./find-group-action";

/**
 * Cancels an action: its pending groups become `canceled` (a group already being applied finishes: its change may be
 * on the platform); a completed or canceled action is 409.
 */
export async function cancelGroupAction(db: Db, tenantId: string, actionId: string, now: Date) {
  return db.transaction(async (tx) => {
    const found = await findGroupAction(tx, tenantId, actionId);
    const [a] = await tx.select().from(groupActions).where(eq(groupActions.id, found.id)).for("update");
    if (a.status === "completed" || a.status === "canceled") throw new Conflict(`Group action ${a.id} is already ${a.status}.`);
    await tx
      .update(groupActionGroups)
      .set({ state: "canceled", at: now })
      .where(and(eq(groupActionGroups.actionId, a.id), inArray(groupActionGroups.state, ["pending"])));
    const [row] = await tx.update(groupActions).set({ status: "canceled", finishedAt: now }).where(eq(groupActions.id, a.id)).returning();
    await recordActionStatus(tx, row, now);
    return row;
  });
}
