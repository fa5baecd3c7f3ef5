import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";
import { recordProgressEvent, recordStatusEvent } from "./campaign-events";

type Status = (typeof campaigns.$inferSelect)["status"];
type PauseReason = (typeof campaigns.$inferSelect)["pauseReason"];

/** The campaign status transitions (docs/decisions.md#campaign-status, docs/dispatch.md); anything else is refused. */
const allowed: Record<Status, Status[]> = {
  pending: ["sending", "paused", "canceled", "completed", "failed"],
  sending: ["paused", "completed", "failed", "canceled"],
  paused: ["sending", "pending", "canceled", "completed", "failed"],
  completed: [],
  failed: [],
  canceled: [],
};

export const canTransition = (from: Status, to: Status) => allowed[from].includes(to);

/**
 * Moves a campaign from one of `from` to `to` (compare-and-set on the status) and records
 * `campaign_status` in the same transaction. Returns the updated row, or null when it was not in `from`.
 */
export async function transition(
  db: Db,
  campaignId: string,
  from: Status[],
  to: Status,
  at: Date,
  extra: { pauseReason?: PauseReason; nextRunAt?: Date; finishedAt?: Date; startedAt?: Date; queueReadyAt?: Date } = {},
) {
  const sources = from.filter((s) => canTransition(s, to));
  if (sources.length === 0) return null;
  return db.transaction(async (tx) => {
    const [before] = await tx
      .select({ status: campaigns.status })
      .from(campaigns)
      .where(and(eq(campaigns.id, campaignId), inArray(campaigns.status, sources)))
      .for("update");
    if (!before) return null;
    const [row] = await tx
      .update(campaigns)
      .set({ status: to, pauseReason: to === "paused" ? (extra.pauseReason ?? "user") : null, updatedAt: at, ...withoutPause(extra) })
      .where(eq(campaigns.id, campaignId))
      .returning();
    await recordStatusEvent(tx, row, before.status, at);
    if (to === "completed" || to === "failed" || to === "canceled") await recordProgressEvent(tx, row, at, true);
    return row;
  });
}

function withoutPause<T extends { pauseReason?: unknown }>(extra: T): Omit<T, "pauseReason"> {
  const { pauseReason: _ignored, ...rest } = extra;
  return rest;
}
