/**
 * A number's health (CONTRACT §7 "Health"; docs/numbers.md): the states a channel's number goes through and
 * the one place a state changes, so every change emits `channel_status` with the new `health`. The states
 * that stop sends (`cooling`, `capped`, `restricted`, `logged_out`, `banned`) are read by the dispatch claim
 * through sendableChannelSql; `cooling` and `capped` end by themselves at `health_until`.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { tsParam } from "../../db/errors";
import { channels, type channelHealthStates } from "../../db/schema";
import { recordEvent } from "../outbox/record-event";
import { nextBrasiliaMidnight } from "./budget";

export type HealthState = (typeof channelHealthStates)[number];

/** States in which a number sends (a merely offline channel keeps its state; `status` says it is offline). */
export const sendingStates: readonly HealthState[] = ["ok", "warming"];
/** States that end by themselves at `health_until`. */
export const timedStates: readonly HealthState[] = ["cooling", "capped"];

const quoted = (states: readonly string[]) => sql.raw(states.map((s) => `'${s}'`).join(", "));

/**
 * Whether the channel row `alias` can send at `now`, as SQL: connected, and in a sending state or in a timed
 * state whose `health_until` has passed (the sweep that writes it back to ok/warming may not have run yet).
 */
export function sendableChannelSql(alias: string, now: Date): SQL<boolean> {
  const r = (column: string) => sql.raw(`${alias}.${column}`);
  return sql<boolean>`(${r("status")} = 'connected' and (${r("health_state")} in (${quoted(sendingStates)})
    or (${r("health_state")} in (${quoted(timedStates)}) and ${r("health_until")} <= ${tsParam(now)})))`;
}

/** The cool-down after a rate-limit answer: 1 min, doubling per signal within an hour, at most 60 min (NUMBER_COOLING_BASE_MS scales it for tests). */
export function coolingConfig() {
  const baseMs = Number(process.env.NUMBER_COOLING_BASE_MS ?? 60_000);
  return { baseMs, capMs: baseMs * 60, quietMs: baseMs * 60 };
}

export interface HealthChange {
  state: HealthState;
  reason: string | null;
  /** When a timed state ends; null otherwise. */
  until: Date | null;
}

type ChannelRow = typeof channels.$inferSelect;

/**
 * Moves a channel to `change` (inside the caller's transaction when it passes one) and, when the state changed,
 * records `channel_status` with the new health. `health` builds the payload's `health` object from the updated
 * row (the numbers domain's view of it); without it the payload carries the state fields alone. Returns the
 * updated row, or null when nothing changed.
 */
export async function changeHealth(
  db: Db | Tx,
  channelId: string,
  change: HealthChange,
  now: Date,
  health: (row: ChannelRow) => Record<string, unknown> = (row) => ({
    state: row.healthState,
    reason: row.healthReason,
    since: row.healthSince?.toISOString() ?? null,
    until: row.healthUntil?.toISOString() ?? null,
  }),
): Promise<ChannelRow | null> {
  const run = async (tx: Db | Tx) => {
    const [before] = await tx.select().from(channels).where(eq(channels.id, channelId)).for("update");
    if (!before) return null;
    const same = before.healthState === change.state && before.healthReason === change.reason && before.healthUntil?.getTime() === change.until?.getTime();
    if (same) return null;
    const [row] = await tx
      .update(channels)
      .set({
        healthState: change.state,
        healthReason: change.reason,
        healthUntil: change.until,
        healthSince: before.healthState === change.state ? before.healthSince : now,
        updatedAt: now,
      })
      .where(eq(channels.id, channelId))
      .returning();
    if (before.healthState !== change.state) {
      await recordEvent(
        tx,
        row.tenantId,
        "channel_status",
        { id_channel: row.id, name: row.name, status: row.status, previous_status: before.status, health: health(row) },
        now,
      );
    }
    return row;
  };
  return "transaction" in db ? db.transaction(run) : run(db);
}

/**
 * The platform answered rate-limited: the number cools down. A signal while it is already cooling changes
 * nothing (the loop's other in-flight sends answer the same); a new one within the quiet hour doubles the
 * cool-down, after a quiet hour it starts again at the base. Returns when the cool-down ends.
 */
export async function recordRateLimited(db: Db, channelId: string, now: Date, reason = "rate-overlimit"): Promise<Date | null> {
  const { baseMs, capMs, quietMs } = coolingConfig();
  return db.transaction(async (tx) => {
    const [c] = await tx.select().from(channels).where(eq(channels.id, channelId)).for("update");
    if (!c) return null;
    if (c.healthState === "cooling" && c.healthUntil && c.healthUntil > now) return c.healthUntil;
    // A number the platform restricted, banned or logged out stays so: a rate limit does not soften it.
    if (!sendingStates.includes(c.healthState) && !timedStates.includes(c.healthState)) return null;
    const quiet = !c.rateLimitedAt || now.getTime() - c.rateLimitedAt.getTime() > quietMs;
    const coolingMs = quiet || c.coolingMs <= 0 ? baseMs : Math.min(capMs, c.coolingMs * 2);
    const until = new Date(now.getTime() + coolingMs);
    await tx.update(channels).set({ coolingMs, rateLimitedAt: now }).where(eq(channels.id, channelId));
    await changeHealth(tx, channelId, { state: "cooling", reason, until }, now);
    return until;
  });
}

/** The number reached today's cap: no sends until the next 00:00 in Brasília. */
export async function markCapped(db: Db | Tx, channelId: string, now: Date, reason = "daily_message_cap") {
  return changeHealth(db, channelId, { state: "capped", reason, until: nextBrasiliaMidnight(now) }, now);
}

/** The channels whose timed state has ended by `now` (the sweep writes them back to ok/warming). */
export const timedStateEndedSql = (now: Date) => and(sql`${channels.healthState} in (${quoted(timedStates)})`, sql`${channels.healthUntil} <= ${tsParam(now)}`);
