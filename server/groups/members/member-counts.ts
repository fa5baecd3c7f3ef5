/**
 * The writes both participant paths share (record-participants.ts, server/launches/link/invite-health.ts): a group's member
 * count moved, and the launch's row locked first (one lock order, no deadlock).
 */
import { eq, sql } from "drizzle-orm";
import type { Tx } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { launches } from "../../../db/schema";

/**
 * Adds each delta to its group's `members` (never below 0) and, in the same statement, moves the groups'
 * `last_event_at` to when their latest event arrived. Returns the deltas that moved something.
 */
export async function moveMembers(
  tx: Tx,
  deltas: { launchId: string; groupId: string; delta: number }[],
  arrived: { launchId: string; groupId: string; at: Date }[] = [],
) {
  const moved = deltas.filter((d) => d.delta !== 0);
  const rows = new Map<string, { launchId: string; groupId: string; delta: number; at: Date | null }>();
  for (const d of moved) rows.set(`${d.launchId}\n${d.groupId}`, { ...d, at: null });
  for (const a of arrived) {
    const k = `${a.launchId}\n${a.groupId}`;
    rows.set(k, { launchId: a.launchId, groupId: a.groupId, delta: rows.get(k)?.delta ?? 0, at: a.at });
  }
  if (rows.size === 0) return moved;
  // greatest() ignores nulls: a group with no arrival keeps its last_event_at.
  await tx.execute(sql`update launch_groups g set members = greatest(0, g.members + v.delta), last_event_at = greatest(g.last_event_at, v.at)
    from (values ${sql.join(
      [...rows.values()].map((r) => sql`(${r.launchId}::text, ${r.groupId}::text, ${r.delta}::int, ${r.at ? tsParam(r.at) : sql`null::timestamptz`})`),
      sql`, `,
    )}) as v(launch_id, id_group, delta, at)
    where g.launch_id = v.launch_id and g.id_group = v.id_group`);
  return moved;
}

/** The launch's row first, as applyRestatus and the group additions take it: one lock order, no deadlock. */
export async function lockLaunch(tx: Tx, launchId: string) {
  await tx.select({ id: launches.id }).from(launches).where(eq(launches.id, launchId)).for("update");
}
