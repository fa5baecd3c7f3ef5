/**
 * A number's budget (CONTRACT §7 "Budgets"; docs/numbers.md): the tenant's `number_health` settings with a
 * channel's own `limits` over them, and what they allow on a given Brasília day. Pure: the dispatch claim,
 * the launch engine and the channel answers all read a channel's budget from here.
 */
import type { ChannelLimits } from "../../db/schema";
import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import { brasiliaParts, brasiliaTimeZone } from "../time/brasilia";

/** The tenant's `number_health` settings (every field present; a channel's `limits` override them one by one). */
export interface NumberHealth {
  /** Messages per channel per Brasília day (campaign sends and monitoring copies); null: no cap. */
  daily_message_cap: number | null;
  /** Days from the first pairing during which the cap ramps up (0: no warm-up). */
  warmup_days: number;
  /** The cap on warm-up day 1; each following warm-up day × 1.5, rounded up. */
  warmup_first_day_cap: number;
  /** The least time between two sends of one channel, whatever campaigns they belong to. */
  min_send_gap_seconds: number;
  /** Groups a channel may create per Brasília day (launches). */
  group_create_cap: number;
}

const fields = ["daily_message_cap", "warmup_days", "warmup_first_day_cap", "min_send_gap_seconds", "group_create_cap"] as const;

/** The tenant's values with the channel's own over them (an absent or null override keeps the tenant's). */
export function effectiveBudget(tenant: NumberHealth, own: ChannelLimits | null | undefined): NumberHealth {
  const out = { ...tenant };
  for (const f of fields) {
    const v = own?.[f];
    if (v !== undefined && v !== null) (out as Record<string, number | null>)[f] = v;
  }
  return out;
}

/** A Brasília day (YYYY-MM-DD) as a count of days, so two days subtract. */
const dayNumber = (day: string) => Math.round(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) / 86_400_000);

/** The Brasília day of an instant, YYYY-MM-DD (the day the usage counters belong to). */
export const brasiliaDay = (at: Date) => brasiliaParts(at).date;

/** Which day of its life the number is on (1 = the Brasília day of its first pairing); null before it was ever paired. */
export function dayOfLife(firstPairedAt: Date | null, now: Date): number | null {
  if (!firstPairedAt) return null;
  return Math.max(1, dayNumber(brasiliaDay(now)) - dayNumber(brasiliaDay(firstPairedAt)) + 1);
}

/** The warm-up cap of day `day` (1-based): day 1 is `first`, each next day × 1.5 rounded up. */
export function warmupCap(first: number, day: number): number {
  let cap = first;
  for (let d = 1; d < day; d++) cap = Math.ceil(cap * 1.5);
  return cap;
}

export interface DailyCap {
  /** The messages allowed today; null: no cap. */
  cap: number | null;
  /** The warm-up day (1…warmup_days) when the number is warming up today; null otherwise. */
  warmupDay: number | null;
}

/** Today's message cap: the warm-up ramp while the number is within its warm-up days (never above daily_message_cap), else daily_message_cap. */
export function dailyCap(budget: NumberHealth, firstPairedAt: Date | null, now: Date): DailyCap {
  const day = dayOfLife(firstPairedAt, now);
  if (day === null || budget.warmup_days <= 0 || day > budget.warmup_days) return { cap: budget.daily_message_cap, warmupDay: null };
  const ramp = warmupCap(budget.warmup_first_day_cap, day);
  return { cap: budget.daily_message_cap === null ? ramp : Math.min(ramp, budget.daily_message_cap), warmupDay: day };
}

/** The next 00:00 in Brasília after `now` (when a `capped` number may send again and the day's counters restart). */
export function nextBrasiliaMidnight(now: Date): Date {
  const today = dayNumber(brasiliaDay(now));
  const tomorrow = new Date((today + 1) * 86_400_000).toISOString().slice(0, 10);
  return fromZonedTime(`${tomorrow}T00:00:00`, brasiliaTimeZone);
}

/** The state of a number that may send (CONTRACT §7): `warming` within its warm-up days, else `ok`. */
export function restingState(budget: NumberHealth, firstPairedAt: Date | null, now: Date): "ok" | "warming" {
  return dailyCap(budget, firstPairedAt, now).warmupDay === null ? "ok" : "warming";
}
