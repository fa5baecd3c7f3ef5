import { eq } from "drizzle-orm";
import type { Tx } from "../../../db/client";
import { type GroupActionSpec, groupActionGroups, groupActions, launchGroups } from "../../../db/schema";
import { newId } from "../../ids";
import { recordActionStatus } from "./action-events";

/**
 * A group action of type `remove` holding only `groups` of the launch (`fixed_groups`: not widened to the launch's
 * groups when it starts), due now; its `group_action` event written. Answers its id (wake it after the commit).
 * Buyer removals and moderation's removals go through it, so the engine's admin numbers, pacing and read-back apply.
 */
export function createFixedRemoval(
  tx: Tx,
  launch: { id: string; tenantId: string },
  name: string,
  groups: string[],
  participants: string[],
  now: Date,
): Promise<string> {
  return createFixedAction(tx, launch, name, groups, { type: "remove", participants: [...new Set(participants)] }, now);
}

/** The same for any action the service makes itself (moderation's `delete_message`): due now, holding only `groups`. */
export async function createFixedAction(
  tx: Tx,
  launch: { id: string; tenantId: string },
  name: string,
  groups: string[],
  action: GroupActionSpec,
  now: Date,
  /** When it is due (default now). */
  runAt: Date = now,
): Promise<string> {
  const positions = new Map(
    (await tx.select({ groupId: launchGroups.groupId, position: launchGroups.position }).from(launchGroups).where(eq(launchGroups.launchId, launch.id))).map(
      (g) => [g.groupId, g.position],
    ),
  );
  const id = newId("action");
  const unique = [...new Set(groups)];
  await tx.insert(groupActions).values({
    id,
    tenantId: launch.tenantId,
    name,
    launchId: launch.id,
    action,
    status: "scheduled",
    scheduledAt: runAt,
    nextRunAt: runAt,
    fixedGroups: true,
    total: unique.length,
    createdAt: now,
  });
  await tx.insert(groupActionGroups).values(unique.map((groupId) => ({ actionId: id, groupId, position: positions.get(groupId) ?? 1 })));
  await recordActionStatus(tx, { id, tenantId: launch.tenantId, status: "scheduled", total: unique.length, done: 0, failed: 0 }, now);
  return id;
}
