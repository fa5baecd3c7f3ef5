/**
 * A channel's number as its answers show it (CONTRACT §7: list-channels, info-channel, edit-channel, the
 * dashboard, `channel_status` webhooks' `data.health`): its health with today's usage and caps, and its own limits.
 */
import type { ChannelLimits, channels } from "../../db/schema";
import type { Db, Tx } from "../../db/client";
import { getSettings } from "../settings/get-settings";
import { brasiliaDay, dailyCap, effectiveBudget, type NumberHealth } from "./budget";

type ChannelRow = typeof channels.$inferSelect;

export interface HealthView {
  state: ChannelRow["healthState"];
  reason: string | null;
  since: string | null;
  until: string | null;
  /** Sends taken today (Brasília day); 0 when the counters belong to another day. */
  sent_today: number;
  /** Today's message cap (the warm-up ramp while warming); null: none. */
  daily_cap: number | null;
  groups_created_today: number;
  group_create_cap: number;
  /** 1…warmup_days while the number warms up; null otherwise. */
  warmup_day: number | null;
}

/** The limit fields, every one present (null: the tenant's value). */
export type LimitsView = { [K in keyof Required<ChannelLimits>]: number | null };
const limitFields = ["daily_message_cap", "warmup_days", "warmup_first_day_cap", "min_send_gap_seconds", "group_create_cap"] as const;

/** The tenant's `number_health` settings (the defaults where it saved none). */
export async function tenantNumberHealth(db: Db | Tx, tenantId: string): Promise<NumberHealth> {
  return (await getSettings(db, tenantId)).number_health;
}

export function healthView(row: ChannelRow, tenant: NumberHealth, now: Date): HealthView {
  const budget = effectiveBudget(tenant, row.limits);
  const today = row.usageDay === brasiliaDay(now);
  const { cap, warmupDay } = dailyCap(budget, row.firstPairedAt, now);
  return {
    state: row.healthState,
    reason: row.healthReason,
    since: row.healthSince?.toISOString() ?? null,
    until: row.healthUntil?.toISOString() ?? null,
    sent_today: today ? row.sentToday : 0,
    daily_cap: cap,
    groups_created_today: today ? row.groupsCreatedToday : 0,
    group_create_cap: budget.group_create_cap,
    warmup_day: warmupDay,
  };
}

export function limitsView(limits: ChannelLimits | null | undefined): LimitsView {
  return Object.fromEntries(limitFields.map((f) => [f, limits?.[f] ?? null])) as LimitsView;
}
