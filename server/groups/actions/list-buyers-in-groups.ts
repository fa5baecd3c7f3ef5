import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { buyerRemovals, groupActionGroups } from "../../../db/schema";
import { buyersInGroups } from "../../launches/funnel/buyers-in-groups";
import { findOwnedLaunch } from "../../launches/launch/find-launch-owned";

/** The launch's buyers still in its groups (the dashboard's "Compradores ainda nos grupos"), each with its removal's state. */
export async function listBuyersInGroups(db: Db, tenantId: string, launchId: string) {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  const rows = await buyersInGroups(db, launch);
  const keys = [...new Set(rows.map((r) => r.personKey))];
  const removals = keys.length
    ? await db
        .select({ personKey: buyerRemovals.personKey, groupId: buyerRemovals.groupId, state: groupActionGroups.state, removedAt: buyerRemovals.removedAt })
        .from(buyerRemovals)
        .leftJoin(groupActionGroups, and(eq(groupActionGroups.actionId, buyerRemovals.actionId), eq(groupActionGroups.groupId, buyerRemovals.groupId)))
        .where(and(eq(buyerRemovals.launchId, launch.id), inArray(buyerRemovals.personKey, keys)))
    : [];
  const stateOf = new Map(removals.map((r) => [`${r.personKey} ${r.groupId}`, r]));
  return rows.map((r) => {
    const removal = stateOf.get(`${r.personKey} ${r.groupId}`);
    const pending = removal && !removal.removedAt && (removal.state === "pending" || removal.state === "applying");
    return {
      participant: r.participant,
      id_group: r.groupId,
      group_name: r.groupName,
      platform: r.platform,
      transaction: r.transaction,
      removal: removal ? (pending ? ("pending" as const) : ("failed" as const)) : null,
    };
  });
}
