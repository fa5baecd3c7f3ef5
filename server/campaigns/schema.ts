import { z } from "zod";
import { campaignStatuses, deliveryStates, messageTypes, pauseReasons } from "../../db/schema";
import { tokenSchema } from "../ids";
import { idSegment } from "../segments/schema";
import { mediaUrl, name, text, url } from "../text";
import { campaignLimits } from "./limits";
import { repeat } from "./series-schema";

const mediaUrlRule =
  "https only; a host that is an IP literal in a private, loopback, link-local or reserved range, or an internal name " +
  "(localhost, *.local, *.internal, a single label), is refused (400). The messaging gateway downloads it.";

export const campaignStatus = z.enum(campaignStatuses).meta({
  description:
    "pending (waiting for its time, the queue or a sending window) → sending ⇄ paused → " +
    "completed (every group processed) | failed (no group could be sent) | canceled",
});
export const anyMessageType = z.enum(messageTypes);
/** The types of a message campaign (create-campaign/message); a carousel has its own body. */
export const messageType = anyMessageType.exclude(["carousel"]);
export const deliveryState = z.enum(deliveryStates);
export const pauseReason = z.enum(pauseReasons);

export type CampaignStatus = z.infer<typeof campaignStatus>;
export type AnyMessageType = z.infer<typeof anyMessageType>;
export type MessageType = z.infer<typeof messageType>;
export type DeliveryState = z.infer<typeof deliveryState>;
export type PauseReason = z.infer<typeof pauseReason>;

export const idCampaign = tokenSchema("campaign").meta({ example: "campaign_7c9e6679-7425-40de-944b-e07fc1f90ae7" });

/** Where a button leads (the recipient's phone opens it, not our gateway). */
const httpsUrl = url({ protocols: ["https"] });

const scheduledAt = text({ max: 64 })
  .meta({ description: "DD/MM/YYYY - HH:mm in Brasília time (America/Sao_Paulo), strictly in the future", example: "25/12/2026 - 09:30" })
  .optional();

const common = {
  name: name(),
  id_segment: idSegment,
  scheduled_at: scheduledAt,
  mention_all: z.boolean().default(false).meta({ description: "Mention every participant without @names in the text" }),
  link_preview: z.boolean().optional().meta({ description: "Show a link preview; used when the tenant's link_preview_mode is ask_always" }),
  repeat: repeat.optional(),
};

export const createMessageCampaignInput = z
  .object({
    ...common,
    message: text({ max: campaignLimits.message }).default("").meta({ description: "The text, or the caption of a media message" }),
    message_type: messageType.default("text"),
    media_url: mediaUrl()
      .optional()
      .meta({ description: `Required for image, video, audio and document. ${mediaUrlRule}` }),
    file_name: text({ max: campaignLimits.fileName, min: 1, trim: true }).optional().meta({ description: "File name shown for a document" }),
  })
  .superRefine((v, ctx) => {
    if (v.message_type === "text") {
      if (v.message.trim() === "") ctx.addIssue({ code: "custom", path: ["message"], message: "is required for a text campaign" });
      if (v.media_url !== undefined) ctx.addIssue({ code: "custom", path: ["media_url"], message: "is only for media message types" });
    } else if (v.media_url === undefined) {
      ctx.addIssue({ code: "custom", path: ["media_url"], message: `is required for message_type ${v.message_type}` });
    }
    if (v.file_name !== undefined && v.message_type !== "document") {
      ctx.addIssue({ code: "custom", path: ["file_name"], message: "is only for message_type document" });
    }
  });

const button = z.object({
  label: text({ max: campaignLimits.carousel.buttonLabel, min: 1, trim: true }),
  type: z.enum(["URL"], { error: "must be URL (the only button type allowed)" }),
  url: httpsUrl,
});
const card = z.object({
  image_url: mediaUrl().meta({ description: mediaUrlRule }),
  text: text({ max: campaignLimits.carousel.cardText, min: 1, trim: true }),
  buttons: z.array(button).max(campaignLimits.carousel.buttonsPerCard, `at most ${campaignLimits.carousel.buttonsPerCard} buttons per card`).default([]),
});

export const createCarouselCampaignInput = z.object({
  ...common,
  carousel_data: z.object({
    message: text({ max: campaignLimits.carousel.message }).default(""),
    cards: z
      .array(card)
      .min(campaignLimits.carousel.minCards, `at least ${campaignLimits.carousel.minCards} card`)
      .max(campaignLimits.carousel.maxCards, `at most ${campaignLimits.carousel.maxCards} cards`),
  }),
});

const createdFields = {
  success: z.literal(true),
  id_campaign: z.string().meta({ description: "The campaign; with `repeat`, the series' first run (a scheduled campaign)" }),
  name: z.string(),
  status: campaignStatus,
  scheduled_at: z.string().nullable().meta({ description: "ISO 8601 with offset; null when sent immediately" }),
  timestamp: z.iso.datetime({ offset: true }),
  id_series: z.string().nullable().meta({ description: "The series `repeat` made (list-series, edit-series, delete-series); null for a one-off campaign" }),
};

export const createMessageCampaignOutput = z.object({ ...createdFields, message_type: messageType });
export const createCarouselCampaignOutput = z.object({ ...createdFields, message_type: z.literal("carousel"), cards_count: z.number().int() });

export const groupCountersOutput = z.object({
  total: z.number().int().meta({ description: "The segment's groups (its total_groups when the campaign was created); the monitoring group is not counted" }),
  sent: z.number().int(),
  pending: z.number().int().meta({ description: "Neither sent nor failed yet" }),
  failed: z.number().int(),
});

/** The monitoring group's copy, reported apart from the campaign's groups (docs/decisions.md#monitoring-copy). */
export const monitoringCopy = z
  .object({
    id_group: z.string(),
    id_channel: z.string(),
    status: deliveryState.meta({ description: "Delivery state of the copy: pending, sending, sent or failed" }),
    sent_at: z.string().nullable().meta({ description: "When the platform accepted the copy (ISO 8601 with offset); null until sent" }),
  })
  .nullable()
  .meta({
    description:
      "The segment's monitoring group, which receives its copy first, before any segment group. " +
      "It is not one of the campaign's groups (not in `groups`). null when the segment has none.",
  });

/** One channel's share of the campaign's groups (CONTRACT §7 "Which channel sends"). */
export const channelShare = z.object({
  id_channel: z.string(),
  sent: z.number().int(),
  pending: z.number().int().meta({ description: "Neither sent nor failed yet (a pending group may still move to another channel: failover)" }),
  failed: z.number().int(),
});

export const infoCampaignInput = z.object({ id_campaign: idCampaign });
export const infoCampaignOutput = z.object({
  success: z.literal(true),
  id_campaign: z.string(),
  name: z.string(),
  status: campaignStatus,
  pause_reason: pauseReason.nullable().meta({
    description:
      "Why a paused campaign waits (null unless paused): `user` (pause-campaign; resume-campaign continues it), `schedule` (outside the sending " +
      "window), `channel_offline` (no channel that reaches its remaining groups is connected and able to send), `channel_limits` (the numbers " +
      "that reach them are only capped or cooling: it resumes when the first limit ends), `send_errors` (10 failed sends in a row on one channel)",
  }),
  message_type: anyMessageType,
  id_segment: z.string(),
  segment_name: z.string(),
  groups: groupCountersOutput,
  channels: z.array(channelShare).meta({
    description:
      "The campaign's groups per channel that sends them (segment groups only; the monitoring copy is in monitoring_group). A group reached " +
      "by several of the segment's channels is given one of them at creation, spread evenly over those that can send; a pending group moves " +
      "to another channel that reaches it when its channel cannot send (failover). Every channel the campaign was given stays listed, with zeros " +
      "once failover moved all its groups away.",
  }),
  monitoring_group: monitoringCopy,
  reads_available: z.boolean().meta({
    description:
      "Whether the messaging platform reports when group messages are read. false on Evolution API (it does not forward group receipts): read counts are unavailable there, not zero. true on the simulator.",
  }),
  scheduled_at: z.string().nullable(),
  created_at: z.string(),
  id_series: z.string().nullable().meta({ description: "The series (repeating campaign) this campaign is a run of; null for a one-off campaign" }),
  eta: z
    .string()
    .nullable()
    .meta({
      description:
        "ISO 8601 with offset: when the campaign should end, from its open groups paced at the mean of min/max_dispatch_rate per " +
        "dispatches_per_loop, the sending windows, and what its numbers' daily caps leave (then their cap per day from 00:00 in Brasília); " +
        "its end once finished. null when it cannot be known: canceled, paused by the user, by send errors or with its numbers offline, or no " +
        "number of it can send. An estimate, updated on each call.",
    }),
});

export const campaignAction = z.object({ id_campaign: idCampaign });
export const campaignActionOutput = z.object({ success: z.literal(true), message: z.string(), id_campaign: z.string(), status: campaignStatus });
