/**
 * Buyers leave the lead groups (CONTRACT §9; docs/launches.md#buyers-leave-the-groups). An approved purchase queues
 * the buyer's removal from each of the launch's groups they are in, as a group action of type `remove` holding just
 * those groups (`fixed_groups`), so the engine's admin numbers, failover, pacing and read-back do the work. One
 * `buyer_removals` row per launch, person and group makes it exactly once: a repeated notice finds the row and queues
 * nothing. The engine marks a row removed, with its `buyer_removed` event, in the transaction that records the group
 * done (the platform no longer lists them).
 */
import { and, asc, eq, inArray, isNull, lte, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { recordAudit, systemActor } from "../../audit/record-audit";
import { buyerRemovals, launches, purchases } from "../../../db/schema";
import { type BuyerInGroup, buyersInGroups } from "../../launches/funnel/buyers-in-groups";
import { findOwnedLaunch } from "../../launches/launch/find-launch-owned";
import type { Launch } from "../../launches/launch/find-launch";
import { recordGroupActivity } from "../activity/group-activity";
import { createFixedRemoval } from "./fixed-removal";

/** A remove action takes at most this many participants (CONTRACT §8). */
const perAction = 200;

/**
 * Queues the removal of `rows` (buyers in the launch's groups) not queued before: their rows written, then one group
 * action per 200 participants holding only their groups. Answers the actions made (wake them after the commit).
 */
async function queueRemovals(tx: Tx, launch: Launch, rows: BuyerInGroup[], now: Date): Promise<string[]> {
  if (rows.length === 0) return [];
  const fresh = await tx
    .insert(buyerRemovals)
    .values(
      rows.map((r) => ({
        launchId: launch.id,
        personKey: r.personKey,
        groupId: r.groupId,
        participant: r.participant,
        platform: r.platform,
        transaction: r.transaction,
        createdAt: now,
      })),
    )
    .onConflictDoNothing()
    .returning({ personKey: buyerRemovals.personKey, groupId: buyerRemovals.groupId, participant: buyerRemovals.participant });
  if (fresh.length === 0) return [];
  const made: string[] = [];
  for (let i = 0; i < fresh.length; i += perAction) {
    const chunk = fresh.slice(i, i + perAction);
    const id = await createFixedRemoval(
      tx,
      launch,
      "Remover compradores dos grupos",
      chunk.map((r) => r.groupId),
      chunk.map((r) => r.participant),
      now,
    );
    for (const r of chunk) {
      await tx
        .update(buyerRemovals)
        .set({ actionId: id })
        .where(and(eq(buyerRemovals.launchId, launch.id), eq(buyerRemovals.personKey, r.personKey), eq(buyerRemovals.groupId, r.groupId)));
    }
    made.push(id);
  }
  return made;
}

/**
 * After a purchase notice (approved, not refunded): the buyer's removal from the groups of each launch that removes
 * buyers (not in dry_run), created before the purchase. Safe to call again for the same notice (nothing is queued
 * twice), which is how a notice whose first handling failed after recording is finished. Answers the actions made.
 */
export async function queueBuyerRemovals(db: Db, tenantId: string, platform: string, transaction: string, now: Date): Promise<string[]> {
  const notices = await db
    .select({ status: purchases.status, matchKey: purchases.matchKey, occurredAt: purchases.occurredAt })
    .from(purchases)
    .where(and(eq(purchases.tenantId, tenantId), eq(purchases.platform, platform), eq(purchases.transaction, transaction)));
  const approved = notices.find((n) => n.status === "approved");
  // A refund or chargeback re-adds no one (the platform cannot add someone without their consent); it is only recorded.
  if (!approved?.matchKey || notices.some((n) => n.status === "refunded")) return [];
  const candidates = await db
    .select()
    .from(launches)
    .where(
      and(
        eq(launches.tenantId, tenantId),
        lte(launches.createdAt, approved.occurredAt),
        sql`(${launches.buyers}->>'remove_from_groups')::boolean and not (${launches.buyers}->>'dry_run')::boolean`,
      ),
    )
    .orderBy(asc(launches.createdAt));
  const made: string[] = [];
  for (const launch of candidates) {
    const queued = await db.transaction(async (tx) => {
      const actions = await queueRemovals(tx, launch, await buyersInGroups(tx, launch, approved.matchKey as string), now);
      // The service's audit entry: one per launch and notice (the actions hold the groups and participants).
      if (actions.length > 0) await recordAudit(tx, { tenantId, actor: systemActor, action: "launch.buyer_removal", target: launch.id, at: now });
      return actions;
    });
    made.push(...queued);
  }
  return made;
}

/**
 * The dashboard's "Remover agora": every buyer still in the launch's groups is removed now (whatever remove_from_groups
 * and dry_run say: the tenant asked). A person and group whose earlier removal failed or was canceled is queued again;
 * one still pending is left to it. Answers the actions made and how many people and groups they hold.
 */
export async function removeBuyersNow(db: Db, tenantId: string, launchId: string, now: Date) {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  return db.transaction(async (tx) => {
    const rows = await buyersInGroups(tx, launch);
    // Finished without removing (failed, canceled, or the action is gone): free the key for a new removal.
    await tx.execute(sql`delete from buyer_removals r where r.launch_id = ${launch.id} and r.removed_at is null and not exists (
      select 1 from group_action_groups g where g.action_id = r.action_id and g.id_group = r.id_group and g.state in ('pending', 'applying'))`);
    const actions = await queueRemovals(tx, launch, rows, now);
    const queued = actions.length
      ? await tx.select({ n: sql<number>`count(*)::int` }).from(buyerRemovals).where(inArray(buyerRemovals.actionId, actions))
      : [{ n: 0 }];
    return { actions, removals: queued[0]?.n ?? 0 };
  });
}

/**
 * The engine found the group done (read back): the buyers this action removed from it are marked, each with its
 * `buyer_removed` event (in the engine's transaction).
 */
export async function markBuyersRemoved(tx: Tx, actionId: string, groupId: string, at: Date) {
  const removed = await tx
    .update(buyerRemovals)
    .set({ removedAt: at })
    .where(and(eq(buyerRemovals.actionId, actionId), eq(buyerRemovals.groupId, groupId), isNull(buyerRemovals.removedAt)))
    .returning();
  if (removed.length === 0) return;
  const [launch] = await tx.select({ tenantId: launches.tenantId }).from(launches).where(eq(launches.id, removed[0].launchId));
  for (const r of removed) {
    await recordGroupActivity(
      tx,
      launch.tenantId,
      { event: "buyer_removed", id_launch: r.launchId, id_group: r.groupId, participant: r.participant, id_purchase: r.transaction, platform: r.platform },
      at,
    );
  }
}
