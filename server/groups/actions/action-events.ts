import type { Db, Tx } from "../../../db/client";
import type { groupActions } from "../../../db/schema";
import { recordEvent } from "../../outbox/record-event";

type ActionRow = Pick<typeof groupActions.$inferSelect, "id" | "tenantId" | "status" | "total" | "done" | "failed">;

/** The action's group counters: pending is what is neither done nor failed (none once it is canceled or completed). */
export const groupCounts = (a: ActionRow) => ({
  total: a.total,
  done: a.done,
  failed: a.failed,
  pending: a.status === "canceled" || a.status === "completed" ? 0 : Math.max(0, a.total - a.done - a.failed),
});

/** `group_activity` `group_action` for the action's status as it is in `a` (call in the change's transaction). */
export function recordActionStatus(tx: Db | Tx, a: ActionRow, now: Date) {
  return recordEvent(tx, a.tenantId, "group_activity", { event: "group_action", id_action: a.id, status: a.status, groups: groupCounts(a) }, now);
}
