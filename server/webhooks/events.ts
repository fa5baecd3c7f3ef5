/**
 * The webhook events (docs/webhooks.md#payloads): one zod schema per event type, the one source of the payload
 * types (recordEvent and the builders take them), of the OpenAPI document's `webhooks` section and of the
 * examples in docs/webhooks.md (test/webhooks/event-schemas.test.ts parses each one, and every payload the
 * service builds, with these).
 */
import { z } from "zod";
import { campaignStatuses, channelHealthStates, moderationActions, moderationRules } from "../../db/schema";
import { tokenSchema } from "../ids";
import { idGroup } from "../messaging/group-id";

// Leaves only (db/schema, ids, messaging): every domain that records an event reaches this file through the
// outbox, so it imports no domain; channels/schema takes a channel's status and health from here.
const count = z.number().int().min(0);
const isoTime = z.iso.datetime({ offset: true });
const idCampaign = tokenSchema("campaign");
const idChannel = tokenSchema("channel");
const idLaunch = tokenSchema("launch");
const campaignStatus = z.enum(campaignStatuses);

export const channelStatus = z.enum(["connecting", "connected", "disconnected"]).meta({
  description: "connecting (awaiting pairing) → connected ⇄ disconnected",
});

/** CONTRACT §7 "Health": a channel's number as channel answers and `channel_status` webhooks show it. */
export const channelHealth = z
  .object({
    state: z.enum(channelHealthStates).meta({
      description:
        "ok: sends. warming: sends, within its warm-up days (daily_cap follows the ramp). cooling: the platform answered rate-limited; " +
        "no sends until `until` (1 min, doubling per signal within an hour, at most 60 min). capped: daily_cap reached; no sends until `until` " +
        "(the next 00:00 in Brasília). restricted: the platform restricted the number (a temporary ban). logged_out: the session was ended; " +
        "pair again. banned: the platform banned the number; pair again (a new pairing clears it). A merely offline channel keeps ok/warming " +
        "(its `status` says disconnected).",
    }),
    reason: z.string().nullable().meta({ description: "Why: the platform's disconnect reason, rate-overlimit, daily_message_cap; null for ok/warming." }),
    since: isoTime.nullable().meta({ description: "When the state began (null: never changed)." }),
    until: isoTime.nullable().meta({ description: "When cooling or capped ends; null otherwise." }),
    sent_today: z.number().int().meta({ description: "Messages sent today (Brasília day): campaign sends and monitoring copies." }),
    daily_cap: z.number().int().nullable().meta({ description: "Today's message cap (the warm-up ramp while warming); null: no cap." }),
    groups_created_today: z.number().int().meta({ description: "Groups created today (Brasília day) by launches." }),
    group_create_cap: z.number().int().meta({ description: "Groups the channel may create today." }),
    warmup_day: z.number().int().nullable().meta({ description: "1…warmup_days while the number warms up; null otherwise." }),
  })
  .meta({ description: "The number's health and today's usage (docs/numbers.md#health-states)." });

const campaignGroups = z
  .object({ total: count, sent: count, pending: count, failed: count })
  .meta({ description: "The campaign's segment groups: total = sent + pending + failed." });

const campaignFields = { id_campaign: idCampaign, name: z.string(), status: campaignStatus };

const campaignStatusData = z.object({
  ...campaignFields,
  previous_status: campaignStatus.optional().meta({ description: "Absent on the first event (pending, at creation)." }),
  groups: campaignGroups,
});

const campaignProgressData = z.object({ ...campaignFields, groups: campaignGroups });

const channelStatusData = z.object({
  id_channel: idChannel,
  name: z.string(),
  status: channelStatus,
  previous_status: channelStatus.meta({ description: "Equal to status when only the health changed." }),
  health: channelHealth,
});

const participantChange = z.object({
  participant: z.string().meta({ description: "A phone number or the platform's opaque id (…@lid), as the platform reported it." }),
  staff: z.boolean().meta({ description: "The launch's staff_numbers, the template's admins or the channels' own numbers." }),
});

const linkBrokenReasons = ["group_gone", "not_admin", "all_groups_full", "no_open_group", "group_create_cap"] as const;
export type LinkBrokenReason = (typeof linkBrokenReasons)[number];

const groupActivityData = z.discriminatedUnion("event", [
  z.object({
    event: z.literal("group_created"),
    id_launch: idLaunch,
    id_group: idGroup,
    name: z.string(),
    position: z.number().int().min(1),
    invite_url: z.string().nullable(),
  }),
  z.object({ event: z.literal("group_full"), id_launch: idLaunch, id_group: idGroup, members: count }),
  z.object({
    event: z.literal("link_broken"),
    id_launch: idLaunch,
    id_group: idGroup.optional().meta({ description: "Absent when the join link as a whole is broken (at most once an hour)." }),
    reason: z.enum(linkBrokenReasons),
  }),
  z.object({
    event: z.literal("members_changed"),
    id_launch: idLaunch,
    id_group: idGroup,
    joined: z.array(participantChange),
    left: z.array(participantChange),
    members: count.meta({ description: "The group's count when the event was made, staff included." }),
  }),
  z.object({
    event: z.literal("traffic_alert"),
    id_launch: idLaunch,
    reason: z.literal("clicks_without_joins").meta({ description: "The link got clicks and nobody joined: a dead or full invite, or a broken ad." }),
    clicks: count.meta({ description: "Counted clicks of the link in the window." }),
    minutes: z.number().int().min(1).meta({ description: "The window: the launch's alerts.clicks_without_joins_minutes." }),
    id_group: idGroup.nullable().meta({ description: "The group the link sends people to now (the first filling one); null when none is filling." }),
  }),
  z.object({
    event: z.literal("purchase"),
    id_launch: idLaunch,
    status: z.enum(["approved", "refunded"]).meta({
      description: "approved: a purchase the marketplace approved; refunded: its refund or chargeback (the buyer no longer counts).",
    }),
    platform: z.string().meta({ description: "The marketplace (integration type) that sent it: hotmart, kiwify." }),
    transaction: z.string().meta({ description: "The marketplace's transaction id." }),
    phone: z.string().nullable().meta({ description: "The buyer's phone, digits with the country code (null: the checkout had none)." }),
    product: z.string().nullable().meta({ description: "The product's name as the marketplace sent it." }),
    amount: z.string().nullable().meta({ description: "The price as the marketplace sent it (a decimal string); null when it sent none." }),
    currency: z.string().nullable(),
    id_group: idGroup.nullable().meta({
      description:
        "The group of the launch the buyer is in (their latest join; a group they left when in none now); null when the buyer is a lead who never joined.",
    }),
  }),
  z.object({
    event: z.literal("buyer_removed"),
    id_launch: idLaunch,
    id_group: idGroup,
    participant: z.string().meta({ description: "The id the group listed the buyer by: a phone number or the platform's opaque id (…@lid)." }),
    id_purchase: z
      .string()
      .nullable()
      .meta({ description: "The marketplace's transaction id of the purchase that made them a buyer (the `transaction` of the `purchase` event)." }),
    platform: z.string().nullable().meta({ description: "The marketplace (integration type) of that purchase: hotmart, kiwify." }),
  }),
  z.object({
    event: z.literal("moderation"),
    id_launch: idLaunch,
    id_group: idGroup,
    decisions: z
      .array(
        z.object({
          at: isoTime.meta({ description: "When the decision was made (ISO 8601, UTC)." }),
          participant: z.string().meta({ description: "A phone number or the platform's opaque id (…@lid), as the group listed them." }),
          rule: z.enum(moderationRules),
          action: z.enum(moderationActions),
          excerpt: z.string().meta({ description: "At most 100 characters of the message (empty for a join)." }),
        }),
      )
      .meta({
        description:
          "The group's moderation decisions not reported yet, oldest first (list-moderation-events lists the same). Batched: at most one event a minute per group.",
      }),
  }),
  z.object({
    event: z.literal("group_action"),
    id_action: z.string().meta({ description: "The group action (action_<uuid>; docs/groups.md)." }),
    status: z.enum(["scheduled", "running", "completed", "canceled"]),
    groups: z.object({ total: count, done: count, failed: count, pending: count }),
  }),
]);

/** The event types, one URL each (edit-webhooks). */
export const eventTypes = ["campaign_status", "campaign_progress", "channel_status", "group_activity"] as const;
export type EventType = (typeof eventTypes)[number];

/** Each event type's `data`. */
export const eventData = {
  campaign_status: campaignStatusData,
  campaign_progress: campaignProgressData,
  channel_status: channelStatusData,
  group_activity: groupActivityData,
} as const satisfies Record<EventType, z.ZodType>;
export type EventData<T extends EventType> = z.infer<(typeof eventData)[T]>;
export type GroupActivity = EventData<"group_activity">;
export type ParticipantChange = z.infer<typeof participantChange>;

const sentWhen: Record<EventType, string> = {
  campaign_status: "Every status change of a campaign, its creation (pending) included.",
  campaign_progress: "Groups were processed: at most once a second per campaign, plus one when it ends.",
  channel_status: "Every status change of a channel and every change of its number's health state; one event when both change at once.",
  group_activity:
    "A launch's groups: a group created, a group full, the link broken, people joining and leaving, clicks without joins, a lead or member " +
    "buying or refunded through a marketplace's webhook, a group action's status change, moderation's decisions (at most one event a " +
    "minute per group) (data.event says which).",
};

/**
 * The body POSTed for an event of `type`, as a receiver gets it: `test` on a test-webhook send, `sub` (the
 * account) on a partner app's copy.
 */
export function eventBody<T extends EventType>(type: T) {
  return z
    .object({
      type: z.literal(type),
      timestamp: isoTime.meta({ description: "When the change happened (ISO 8601, UTC)." }),
      test: z.literal(true).optional().meta({ description: "Only on a test-webhook send (sample data)." }),
      sub: z.string().optional().meta({ description: "Only on a partner app's copy: the account the event belongs to (its tokens' sub)." }),
      data: eventData[type],
    })
    .meta({ description: sentWhen[type] });
}

/** The payload stored in the outbox for an event of `type` (a body without `test` and `sub`). */
export interface EventPayload<T extends EventType> {
  type: T;
  timestamp: string;
  data: EventData<T>;
}
