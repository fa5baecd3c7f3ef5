/**
 * The tenant's `number_health` settings read from the saved settings object (the dispatch claim reads it in its
 * lease's statement, raw): each field as saved when it is valid, else its default. Written by the dispatch
 * engineer (issue 24) beside budget.ts so the claim does not depend on how the settings section is merged.
 */
import type { NumberHealth } from "./budget";

/** The defaults of CONTRACT §7 "Budgets": no cap, no warm-up, no gap; 20 groups a day. */
export const numberHealthDefaults: Readonly<NumberHealth> = Object.freeze({
  daily_message_cap: null,
  warmup_days: 0,
  warmup_first_day_cap: 50,
  min_send_gap_seconds: 0,
  group_create_cap: 20,
});

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** `saved`: the tenant's saved settings (object or JSON text; null when never saved). */
export function numberHealthOf(saved: unknown): NumberHealth {
  const object = typeof saved === "string" ? JSON.parse(saved) : saved;
  const section = (object as { number_health?: Record<string, unknown> } | null)?.number_health ?? {};
  const out: NumberHealth = { ...numberHealthDefaults };
  if (section.daily_message_cap === null || isCount(section.daily_message_cap)) out.daily_message_cap = section.daily_message_cap as number | null;
  for (const f of ["warmup_days", "warmup_first_day_cap", "min_send_gap_seconds", "group_create_cap"] as const) {
    if (isCount(section[f])) out[f] = section[f];
  }
  return out;
}
