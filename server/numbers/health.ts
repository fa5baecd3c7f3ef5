/**
 * A number's health (CONTRACT §7 "Health"; docs/numbers.md): the states a channel's number goes through and
 * the one place a state changes, so every change emits `channel_status` with the new `health`. The states
 * that stop sends (`cooling`, `capped`, `restricted`, `logged_out`, `banned`) are read by the dispatch claim
 * through sendableChannelSql; `cooling` and `capped` end by themselves at `health_until`.
 */
import { recordAudit, systemActor } from "../audit/record-audit";
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { tsParam } from "../../db/errors";
import type { At } from "../../db/params";
import type { Relation } from "../../db/relation";
import { env } from "../env";
import { channels, type channelHealthStates } from "../../db/schema";
import { recordEvent } from "../outbox/record-event";
import { nextBrasiliaMidnight } from "./budget";
import { healthView, tenantNumberHealth } from "./health-view";

export type HealthState = (typeof channelHealthStates)[number];

/** States in which a number sends (a merely offline channel keeps its state; `status` says it is offline). */
export const sendingStates: readonly HealthState[] = ["ok", "warming"];
/** States that end by themselves at `health_until`. */
export const timedStates: readonly HealthState[] = ["cooling", "capped"];

const quoted = (states: readonly string[]) => sql.raw(states.map((s) => `'${s}'`).join(", "));

/**
 * Whether the channel row `channel` (the table under an alias, tableAs) can send at `now`, as SQL: connected, and in a sending state or in a timed
 * state whose `health_until` has passed (the sweep that writes it back to ok/warming may not have run yet).
 */
export function sendableChannelSql(channel: Relation<"status" | "health_state" | "health_until">, now: At): SQL<boolean> {
  const state = channel.col("health_state");
  return sql<boolean>`(${channel.col("status")} = 'connected' and (${state} in (${quoted(sendingStates)})
    or (${state} in (${quoted(timedStates)}) and ${channel.col("health_until")} <= ${tsParam(now)})))`;
}

/** The cool-down after a rate-limit answer: 1 min, doubling per signal within an hour, at most 60 min (NUMBER_COOLING_BASE_MS scales it for tests). */
export function coolingConfig() {
  const baseMs = env.numberCoolingBaseMs;
  return { baseMs, capMs: baseMs * 60, quietMs: baseMs * 60 };
}

export interface HealthChange {
  state: HealthState;
  reason: string | null;
  /** When a timed state ends; null otherwise. */
  until: Date | null;
}

type ChannelRow = typeof channels.$inferSelect;
type ChannelStatus = ChannelRow["status"];

/** The states the platform put the number in: they end only with a new pairing (a connection). */
export const lossStates: readonly HealthState[] = ["restricted", "logged_out", "banned"];

/** A change of a channel: its connection status, its number's health, its number (known at a pairing). */
export interface ChannelChange {
  status?: ChannelStatus;
  health?: HealthChange;
  /** The number the platform says the channel is paired with (null: not known). */
  phone?: string | null;
  /** Apply only while the health is still this (state and until): a decision made on an earlier read is dropped when something moved it meanwhile. */
  ifHealth?: { state: HealthState; until: Date | null };
}

/**
 * Applies `change` to a channel (inside the caller's transaction when it passes one) and, when its status or its
 * health's state changed, records one `channel_status` carrying both. A first connection sets `first_paired_at`
 * (day 1 of the warm-up); a connection with another number than before is a new number: its days start again.
 * The payload's `health` is the channel answers' (healthView). Returns the updated row, or null when nothing changed.
 */
export async function changeChannel(db: Db | Tx, channelId: string, change: ChannelChange, now: Date): Promise<ChannelRow | null> {
  const run = async (tx: Db | Tx) => {
    const [before] = await tx.select().from(channels).where(eq(channels.id, channelId)).for("update");
    if (!before) return null;
    const guard = change.ifHealth;
    if (guard && (before.healthState !== guard.state || before.healthUntil?.getTime() !== guard.until?.getTime())) return null;
    const h = change.health;
    const status = change.status ?? before.status;
    const healthSame = !h || (before.healthState === h.state && before.healthReason === h.reason && before.healthUntil?.getTime() === h.until?.getTime());
    const phone = change.phone ?? before.phone;
    const newNumber = change.phone != null && before.phone !== null && before.phone !== change.phone;
    const firstPairedAt = status === "connected" && (before.firstPairedAt === null || newNumber) ? now : before.firstPairedAt;
    if (healthSame && status === before.status && phone === before.phone && firstPairedAt === before.firstPairedAt) return null;
    const [row] = await tx
      .update(channels)
      .set({
        status,
        phone,
        firstPairedAt,
        ...(h && !healthSame
          ? { healthState: h.state, healthReason: h.reason, healthUntil: h.until, healthSince: before.healthState === h.state ? before.healthSince : now }
          : {}),
        updatedAt: now,
      })
      .where(eq(channels.id, channelId))
      .returning();
    if (before.healthState !== row.healthState) {
      // The audit log's system entry (docs/team.md#audit-log), in this transaction.
      await recordAudit(tx, { tenantId: row.tenantId, actor: systemActor, action: `channel.health_${row.healthState}`, target: row.id, at: now });
    }
    if (before.healthState !== row.healthState || before.status !== row.status) {
      await recordEvent(
        tx,
        row.tenantId,
        "channel_status",
        {
          id_channel: row.id,
          name: row.name,
          status: row.status,
          previous_status: before.status,
          health: healthView(row, await tenantNumberHealth(tx, row.tenantId), now),
        },
        now,
      );
    }
    return row;
  };
  return "transaction" in db ? db.transaction(run) : run(db);
}

/**
 * Moves a channel's health to `change` (see changeChannel): the one place a state changes, so every change of
 * state emits `channel_status` with the new health. Returns the updated row, or null when nothing changed.
 */
export async function changeHealth(db: Db | Tx, channelId: string, change: HealthChange, now: Date): Promise<ChannelRow | null> {
  return changeChannel(db, channelId, { health: change }, now);
}

/**
 * What a status the platform reports does to the number's health: a reason (a logout, a ban, a restriction)
 * puts it in that state; a connection of a number in such a state is a new pairing and clears it, to `resting`
 * (ok, or warming within its warm-up days; a first pairing starts the warm-up). Undefined: the health stays (a
 * mere disconnect keeps ok/warming; a cooling or capped number stays so until its time).
 */
export function healthOnStatus(
  before: { healthState: HealthState },
  status: ChannelStatus,
  loss: { reason?: HealthState; detail?: string },
  resting: "ok" | "warming",
): HealthChange | undefined {
  if (loss.reason && lossStates.includes(loss.reason)) return { state: loss.reason, reason: loss.detail ?? loss.reason, until: null };
  if (status !== "connected" || before.healthState === resting) return undefined;
  if (lossStates.includes(before.healthState) || sendingStates.includes(before.healthState)) return { state: resting, reason: null, until: null };
  return undefined;
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
