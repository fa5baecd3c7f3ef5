/**
 * The number health sweep (CONTRACT §7 "Health"; docs/numbers.md#the-health-sweep): the one definition of the
 * job the embedded runner runs every 30 s and Inngest every minute. It writes back to ok/warming the numbers
 * whose `cooling`/`capped` time has ended (or whose cap was raised since), moves `warming` to `ok` after the
 * warm-up days (and `ok` to `warming` when the tenant turned a warm-up on for a number still within its days),
 * each change emitting `channel_status`, and makes the tenant's campaigns paused `channel_offline` or
 * `channel_limits` due now (the engines are woken by the caller: this folder does not know them).
 */
import { and, eq, gt, inArray, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { campaigns, channels } from "../../db/schema";
import { brasiliaDay, dailyCap, effectiveBudget, restingState, type NumberHealth } from "./budget";
import { changeChannel, type HealthState } from "./health";
import { tenantNumberHealth } from "./health-view";

type ChannelRow = typeof channels.$inferSelect;

/** The longest warm-up (number_health.warmup_days ≤ 60): an `ok` number paired longer ago cannot be warming. */
const longestWarmupMs = 61 * 86_400_000;

/** The state the number should be in at `now`, or undefined when it is right as it is. */
export function sweptState(row: ChannelRow, tenant: NumberHealth, now: Date): "ok" | "warming" | undefined {
  const budget = effectiveBudget(tenant, row.limits);
  const resting = restingState(budget, row.firstPairedAt, now);
  const state: HealthState = row.healthState;
  if (state === "ok" || state === "warming") return state === resting ? undefined : resting;
  if (state === "cooling") return row.healthUntil && row.healthUntil <= now ? resting : undefined;
  if (state === "capped") {
    if (row.healthUntil && row.healthUntil <= now) return resting;
    // The cap was raised (settings or the channel's limits) above today's usage: it may send again.
    const { cap } = dailyCap(budget, row.firstPairedAt, now);
    const sent = row.usageDay === brasiliaDay(now) ? row.sentToday : 0;
    return cap === null || sent < cap ? resting : undefined;
  }
  return undefined;
}

export interface HealthSweepResult {
  /** Channels whose state changed. */
  changed: number;
  /** Paused campaigns made due now. */
  woken: number;
}

export async function sweepNumberHealth(db: Db, now: Date): Promise<HealthSweepResult> {
  const candidates = await db
    .select()
    .from(channels)
    .where(
      or(
        inArray(channels.healthState, ["cooling", "capped", "warming"]),
        and(eq(channels.healthState, "ok"), gt(channels.firstPairedAt, new Date(now.getTime() - longestWarmupMs))),
      ),
    );
  const budgets = new Map<string, NumberHealth>();
  const tenantsWoken = new Set<string>();
  let changed = 0;
  for (const row of candidates) {
    if (!budgets.has(row.tenantId)) budgets.set(row.tenantId, await tenantNumberHealth(db, row.tenantId));
    const state = sweptState(row, budgets.get(row.tenantId) as NumberHealth, now);
    if (!state) continue;
    const done = await changeChannel(
      db,
      row.id,
      { health: { state, reason: null, until: null }, ifHealth: { state: row.healthState, until: row.healthUntil } },
      now,
    );
    if (!done) continue;
    changed++;
    if (row.healthState === "cooling" || row.healthState === "capped") tenantsWoken.add(row.tenantId);
  }
  let woken = 0;
  if (tenantsWoken.size > 0) {
    const due = await db
      .update(campaigns)
      .set({ nextRunAt: now })
      .where(
        and(
          inArray(campaigns.tenantId, [...tenantsWoken]),
          eq(campaigns.status, "paused"),
          inArray(campaigns.pauseReason, ["channel_offline", "channel_limits"]),
          sql`${campaigns.nextRunAt} > ${tsParam(now)}`,
        ),
      )
      .returning({ id: campaigns.id });
    woken = due.length;
  }
  return { changed, woken };
}
