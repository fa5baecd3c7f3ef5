/**
 * The numbers' budgets as the claim enforces them (CONTRACT §7 "Budgets"; docs/dispatch.md#several-numbers-per-group):
 * for each of the tenant's channels with a daily cap (warm-up ramp included) or a least gap between sends,
 * the values in force for the send's Brasília day. Pure; the claim's statement applies them to the channel
 * rows it locks, so no send passes a cap even with two processes.
 */
import { sql } from "drizzle-orm";
import { channels, type ChannelLimits } from "../../db/schema";
import { brasiliaDay, dailyCap, effectiveBudget, type NumberHealth } from "../numbers/budget";

export interface ChannelLimit {
  id: string;
  /** Sends allowed on `day` (null: no cap). */
  cap: number | null;
  /** The least time between two sends of the channel, ms (0: none). */
  gapMs: number;
}

export interface ClaimBudget {
  /** When the claimed sends go out (a step that claims ahead of its pause's end passes that end). */
  at: Date;
  /** The Brasília day `at` falls on: the counters' day. */
  day: string;
  /** Only the channels with a cap or a gap; the others are counted, never held back. */
  limits: ChannelLimit[];
}

export interface BudgetChannel {
  id: string;
  limits: ChannelLimits | null;
  first: string | null;
}

/**
 * The tenant's channels as the step's lease statement reads them (`tenantId`: the campaign row's column):
 * their own limits and first pairing, for channelBudgets.
 */
export const budgetChannelsSql = (tenantId: ReturnType<typeof sql.raw>) =>
  sql<BudgetChannel[] | null>`(select json_agg(json_build_object('id', bc.id, 'limits', bc.limits, 'first', bc.first_paired_at))
    from ${channels} bc where bc.tenant_id = ${tenantId})`;

/** The budgets in force at `at`: the tenant's `number_health` settings with each channel's limits over them. */
export function channelBudgets(tenant: NumberHealth, tenantChannels: BudgetChannel[] | null, at: Date): ClaimBudget {
  const limits: ChannelLimit[] = [];
  for (const ch of tenantChannels ?? []) {
    const budget = effectiveBudget(tenant, ch.limits);
    const { cap } = dailyCap(budget, ch.first ? new Date(ch.first) : null, at);
    const gapMs = Math.round(budget.min_send_gap_seconds * 1000);
    if (cap !== null || gapMs > 0) limits.push({ id: ch.id, cap, gapMs });
  }
  return { at, day: brasiliaDay(at), limits };
}
