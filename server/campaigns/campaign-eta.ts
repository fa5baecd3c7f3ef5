import { sql, type SQL } from "drizzle-orm";
import { channels, type ChannelLimits } from "../../db/schema";
import { estimateEnd, type EtaCampaign, type EtaChannel } from "../dispatch/estimate-end";
import { effectiveBudget } from "../numbers/budget";
import { healthView } from "../numbers/health-view";
import { sendingStates, timedStates } from "../numbers/health";
import { settingsFrom } from "../settings/get-settings";

type ChannelRow = typeof channels.$inferSelect;

/** What the ETA reads of a campaign's numbers, as etaChannelsSql selects it (JSON: times as ISO strings). */
interface EtaChannelJson {
  status: ChannelRow["status"];
  healthState: ChannelRow["healthState"];
  healthReason: string | null;
  healthSince: string | null;
  healthUntil: string | null;
  usageDay: string | null;
  sentToday: number;
  groupsCreatedToday: number;
  firstPairedAt: string | null;
  limits: ChannelLimits | null;
}

/**
 * The campaign's numbers as the ETA reads them, a JSON array selected in info-campaign's own statement (`channelIds`:
 * the campaign row's channel_ids), so the ETA costs no read of its own; null when `active` (SQL) is false.
 */
export const etaChannelsSql = (channelIds: SQL, active: SQL) =>
  sql<EtaChannelJson[] | null>`case when ${active} then (select json_agg(json_build_object('status', ch.status, 'healthState', ch.health_state,
      'healthReason', ch.health_reason, 'healthSince', ch.health_since, 'healthUntil', ch.health_until, 'usageDay', ch.usage_day,
      'sentToday', ch.sent_today, 'groupsCreatedToday', ch.groups_created_today, 'firstPairedAt', ch.first_paired_at, 'limits', ch.limits))
    from ${channels} ch where ch.id = any(array(select jsonb_array_elements_text(${channelIds})))) end`;

/** Whether the ETA needs the tenant's settings and the numbers (etaChannelsSql's `active`), of a campaigns row's status and pause_reason. */
export const etaNeedsNumbersSql = (status: SQL, pauseReason: SQL) =>
  sql`(${status} in ('pending', 'sending') or (${status} = 'paused' and ${pauseReason} in ('schedule', 'channel_limits')))`;

const dateOf = (iso: string | null) => (iso ? new Date(iso) : null);

/**
 * info-campaign's `eta` (docs/dispatch.md#eta): the pure estimateEnd over the tenant's settings and the campaign's
 * numbers as they stand (connected, health, what their caps leave today), both read by info-campaign's statement
 * (`saved`: the tenant's saved settings; `numbers`: etaChannelsSql). A finished or stopped campaign needs neither.
 */
export function campaignEta(c: EtaCampaign, saved: unknown, numbers: EtaChannelJson[] | null, now: Date): Date | null {
  if (c.status !== "pending" && c.status !== "sending" && !(c.status === "paused" && resumesByItself(c))) return estimateEnd(c, null, [], now);
  const settings = settingsFrom(saved);
  const eta: EtaChannel[] = (numbers ?? []).map((n) => {
    const row = {
      ...n,
      healthSince: dateOf(n.healthSince),
      healthUntil: dateOf(n.healthUntil),
      firstPairedAt: dateOf(n.firstPairedAt),
      limits: n.limits ?? {},
    } as ChannelRow;
    const health = healthView(row, settings.number_health, now);
    const until = row.healthUntil && row.healthUntil > now ? row.healthUntil : null;
    const timed = timedStates.includes(row.healthState);
    return {
      usable: row.status === "connected" && (sendingStates.includes(row.healthState) || timed),
      availableFrom: timed ? until : null,
      leftToday: health.daily_cap === null ? null : Math.max(0, health.daily_cap - health.sent_today),
      dailyCap: health.daily_cap,
      gapMs: Math.round(effectiveBudget(settings.number_health, row.limits).min_send_gap_seconds * 1000),
    };
  });
  return estimateEnd(c, settings, eta, now);
}

const resumesByItself = (c: EtaCampaign) => c.pauseReason === "schedule" || c.pauseReason === "channel_limits";
