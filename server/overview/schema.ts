import { z } from "zod";
import { campaignStatuses, channelHealthStates, launchStatuses, pauseReasons } from "../../db/schema";

/**
 * The dashboard's overview (docs/dashboard.md#overview): one answer for the home page, read in one
 * query. Dashboard only (a session procedure, not in the REST API): docs/decisions.md#dashboard-overview-and-phones.
 */
const groups = z.object({ total: z.number().int(), sent: z.number().int(), pending: z.number().int(), failed: z.number().int() });

export const overviewCampaign = z.object({
  id_campaign: z.string(),
  name: z.string(),
  status: z.enum(campaignStatuses),
  pause_reason: z.enum(pauseReasons).nullable(),
  groups,
  scheduled_at: z.string().nullable().meta({ description: "ISO 8601; null: as soon as possible." }),
  started_at: z.string().nullable(),
});

export const overviewNumber = z.object({
  id_channel: z.string(),
  name: z.string(),
  phone: z.string().nullable(),
  status: z.enum(["connecting", "connected", "disconnected"]),
  health_state: z.enum(channelHealthStates),
  health_reason: z.string().nullable(),
  health_until: z.string().nullable(),
  sent_today: z.number().int(),
  daily_cap: z.number().int().nullable().meta({ description: "Today's cap (the warm-up ramp while warming); null: none." }),
});

export const overviewLaunch = z.object({
  id_launch: z.string(),
  name: z.string(),
  status: z.enum(launchStatuses),
  clicks_today: z.number().int(),
  joins_today: z.number().int().meta({ description: "Leads who joined today (staff not counted)." }),
  members: z.number().int(),
  groups: z.number().int(),
  days: z
    .array(z.object({ date: z.string(), clicks: z.number().int(), joins: z.number().int() }))
    .meta({ description: "The last 7 Brasília days, oldest first." }),
});

export const attentionKinds = ["number", "channel_offline", "campaign_paused", "webhooks_failing", "traffic_alert"] as const;

export const overviewAttention = z.object({
  kind: z.enum(attentionKinds),
  /** The channel, campaign, webhook type or launch (traffic_alert) the line is about. */
  id: z.string(),
  name: z.string(),
  /** number: the health state; channel_offline: the channel status; campaign_paused: the pause reason; webhooks_failing: the event type; traffic_alert: the reason. */
  state: z.string(),
  detail: z.string().nullable(),
  /** webhooks_failing: deliveries failed or being retried; traffic_alert: the clicks in the window; 1 otherwise. */
  count: z.number().int(),
  since: z.string().nullable(),
});

export const overviewOutput = z.object({
  generated_at: z.string(),
  today: z.string().meta({ description: "Today in Brasília, YYYY-MM-DD." }),
  campaigns: z.object({ active: z.array(overviewCampaign), scheduled: z.array(overviewCampaign) }),
  sends_today: z.object({
    total: z.number().int(),
    by_hour: z.array(z.number().int()).length(24).meta({ description: "Messages sent today per Brasília hour, 0–23 (monitoring copies included)." }),
  }),
  numbers: z.array(overviewNumber),
  launches: z.array(overviewLaunch),
  attention: z.array(overviewAttention),
});

export type Overview = z.infer<typeof overviewOutput>;
export type OverviewCampaign = z.infer<typeof overviewCampaign>;
export type OverviewAttention = z.infer<typeof overviewAttention>;
