/**
 * The one place the settings defaults live (docs/decisions.md#settings). A tenant without a saved row
 * has exactly these. (Checked against the schema's Settings type where get-settings.ts merges over them.)
 */

/** Every day 08:00–20:00, no extra windows. */
const day = () => ({ enabled: true, start: "08:00", end: "20:00", windows: [] as { start: string; end: string }[] });

export const defaultSettings = deepFreeze({
  dispatch_rates: {
    min_dispatch_rate: 5,
    max_dispatch_rate: 15,
    dispatches_per_loop: 1,
    min_campaign_interval: 30,
    max_campaign_interval: 60,
  },
  preferences: {
    link_preview_mode: "ask_always" as const,
    link_preview_type: "auto" as const,
    forward_message_enabled: false,
  },
  queue: {
    concurrent_mode: "disabled" as const,
  },
  /**
   * A number's budget (CONTRACT §7 "Budgets"; docs/numbers.md#budgets): no daily cap, no warm-up, no gap
   * across campaigns (a zero-pacing campaign is not slowed by default), 20 group creations a day (under the
   * 45–50 a day at which WhatsApp was reported to block creation).
   */
  number_health: {
    daily_message_cap: null as number | null,
    warmup_days: 0,
    warmup_first_day_cap: 50,
    min_send_gap_seconds: 0,
    group_create_cap: 20,
  },
  /** Where "Enviar teste" sends (docs/decisions.md#test-send): none until the tenant lists some. */
  test_groups: [] as { id_channel: string; id_group: string }[],
  sending_schedule: {
    enabled: false,
    finish_queued_on_end: true,
    finish_queued_mode: "between_days" as const,
    cancel_outside_hours: false,
    cancel_mode: "between_days" as const,
    days: {
      monday: day(),
      tuesday: day(),
      wednesday: day(),
      thursday: day(),
      friday: day(),
      saturday: day(),
      sunday: day(),
    },
  },
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
