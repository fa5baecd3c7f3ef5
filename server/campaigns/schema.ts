import { z } from "zod";
import { campaignStatuses, deliveryStates, messageTypes, pauseReasons } from "../../db/schema";
import { tokenSchema } from "../ids";
import { idSegment } from "../segments/schema";
import { mediaUrl, name, text, url } from "../text";
import { campaignLimits } from "./limits";
import { hasMarkup, parseVariations } from "../dispatch/variations";
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
/** The types of a message campaign (create-campaign/message); a carousel and a poll have their own bodies. */
export const messageType = anyMessageType.exclude(["carousel", "poll"]);
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

const variationsRule =
  "Variations (docs/decisions.md#message-variations): {Olá|Oi|E aí} gives each group one option, chosen from its delivery key " +
  "(one level; \\{ \\} \\| write the character); {{grupo}} is the group's name, {{data}} dd/mm and {{hora}} HH:mm in Brasília at send time. " +
  "Unbalanced braces or an unknown variable: 400 naming the field.";

/** A text that may hold variations: parsed once here, refused (400 naming the field) when it does not parse. */
export const withVariations = <T extends z.ZodType<string>>(s: T) =>
  s.superRefine((v, ctx) => {
    if (!hasMarkup(v)) return;
    const parsed = parseVariations(v);
    if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.error });
  });

const common = {
  name: name(),
  id_segment: idSegment,
  scheduled_at: scheduledAt,
  mention_all: z.boolean().default(false).meta({ description: "Mention every participant without @names in the text" }),
  link_preview: z.boolean().optional().meta({ description: "Show a link preview; used when the tenant's link_preview_mode is ask_always" }),
  repeat: repeat.optional(),
};

const messageText = () => withVariations(text({ max: campaignLimits.message }));
const messageTextMeta = { description: `The text, or the caption of a media message. ${variationsRule}` };
const mediaFields = {
  media_url: mediaUrl()
    .optional()
    .meta({ description: `Required for image, video, audio and document. ${mediaUrlRule}` }),
  file_name: text({ max: campaignLimits.fileName, min: 1, trim: true }).optional().meta({ description: "File name shown for a document" }),
};

/** The rules between a message body's fields (create-campaign/message and send-test). */
export function messageBodyRules(v: { message: string; message_type: MessageType; media_url?: string; file_name?: string }, ctx: z.RefinementCtx) {
  if (v.message_type === "text") {
    if (v.message.trim() === "") ctx.addIssue({ code: "custom", path: ["message"], message: "is required for a text campaign" });
    if (v.media_url !== undefined) ctx.addIssue({ code: "custom", path: ["media_url"], message: "is only for media message types" });
  } else if (v.media_url === undefined) {
    ctx.addIssue({ code: "custom", path: ["media_url"], message: `is required for message_type ${v.message_type}` });
  }
  if (v.file_name !== undefined && v.message_type !== "document") {
    ctx.addIssue({ code: "custom", path: ["file_name"], message: "is only for message_type document" });
  }
}

export const createMessageCampaignInput = z
  .object({
    ...common,
    message: messageText().default("").meta(messageTextMeta),
    message_type: messageType.default("text"),
    ...mediaFields,
  })
  .superRefine(messageBodyRules);

const button = z.object({
  label: text({ max: campaignLimits.carousel.buttonLabel, min: 1, trim: true }),
  type: z.enum(["URL"], { error: "must be URL (the only button type allowed)" }),
  url: httpsUrl,
});
const card = z.object({
  image_url: mediaUrl().meta({ description: mediaUrlRule }),
  text: withVariations(text({ max: campaignLimits.carousel.cardText, min: 1, trim: true })).meta({ description: `The card's text. ${variationsRule}` }),
  buttons: z.array(button).max(campaignLimits.carousel.buttonsPerCard, `at most ${campaignLimits.carousel.buttonsPerCard} buttons per card`).default([]),
});

export const carouselData = z.object({
  message: withVariations(text({ max: campaignLimits.carousel.message }))
    .default("")
    .meta({ description: `Text sent with the cards. ${variationsRule}` }),
  cards: z
    .array(card)
    .min(campaignLimits.carousel.minCards, `at least ${campaignLimits.carousel.minCards} card`)
    .max(campaignLimits.carousel.maxCards, `at most ${campaignLimits.carousel.maxCards} cards`),
});

const pollLimits = campaignLimits.poll;

/** A poll's body (docs/polls.md): options distinct regardless of case and surrounding spaces. */
export const pollInput = z
  .object({
    question: text({ max: pollLimits.question, min: 1, trim: true }).meta({ description: "The question (pergunta), at most 255 characters" }),
    options: z
      .array(text({ max: pollLimits.option, min: 1, trim: true }))
      .min(pollLimits.minOptions, `at least ${pollLimits.minOptions} options`)
      .max(pollLimits.maxOptions, `at most ${pollLimits.maxOptions} options`)
      .meta({
        description:
          "2 to 12 options (opções), each at most 100 characters, distinct (compared without case and surrounding spaces). " +
          "Evolution API sends at most 10 (its sendPoll refuses more): there a poll of 11 or 12 options is a 400.",
      }),
    multiple_answers: z.boolean().meta({ description: "true: a voter may choose several options (múltiplas respostas); false: one" }),
  })
  .superRefine((p, ctx) => {
    const seen = new Map<string, number>();
    p.options.forEach((o, i) => {
      const key = o.toLocaleLowerCase("pt-BR");
      const first = seen.get(key);
      if (first !== undefined)
        ctx.addIssue({ code: "custom", path: ["options", i], message: `repeats option ${first} ("${p.options[first]}"): options must be distinct` });
      else seen.set(key, i);
    });
  });

export const createPollCampaignInput = z.object({
  name: common.name,
  id_segment: common.id_segment,
  scheduled_at: common.scheduled_at,
  repeat: common.repeat,
  poll: pollInput,
});

export const createCarouselCampaignInput = z.object({ ...common, carousel_data: carouselData });

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
export const createPollCampaignOutput = z.object({ ...createdFields, message_type: z.literal("poll"), options_count: z.number().int() });
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

/** A poll campaign's results (docs/polls.md): votes per option summed over the campaign's groups. */
export const pollResults = z
  .object({
    question: z.string(),
    multiple_answers: z.boolean(),
    options: z.array(
      z.object({
        text: z.string(),
        votes: z.number().int().nullable().meta({
          description:
            "Voters who chose this option now, summed over the campaign's groups (the monitoring group left out); null when votes_available is false",
        }),
      }),
    ),
    votes_available: z.boolean().meta({
      description:
        "Whether the messaging platform reports poll votes: true on the simulator and on Evolution API 2.3.7 and later; false on earlier Evolution " +
        "releases (they drop vote messages before any webhook). false: votes are unknown, not zero (every `votes` is null).",
    }),
  })
  .nullable()
  .meta({ description: "The poll and its votes, updated as votes arrive; null unless message_type is poll" });

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
  poll: pollResults,
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

// --- send-test (docs/decisions.md#test-send) ---

const notForCarousel = ["message", "message_type", "media_url", "file_name"] as const;

export const sendTestInput = z
  .object({
    name: name().optional().meta({ description: "Ignored (a test send is no campaign); accepted so a create-campaign body can be sent as it is" }),
    id_segment: idSegment.optional().meta({
      description: "Optional: the test groups then get the texts as the segment's first groups would (their names in {{grupo}}, one variant after another)",
    }),
    message: messageText().optional().meta(messageTextMeta),
    message_type: messageType.optional().meta({ description: "As in create-campaign/message (default text); not with carousel_data" }),
    ...mediaFields,
    carousel_data: carouselData.optional().meta({ description: "A carousel, as in create-campaign/carousel (then no message fields)" }),
    mention_all: z.boolean().default(false).meta({ description: "Mention every participant without @names in the text" }),
    link_preview: z.boolean().optional().meta({ description: "Show a link preview; used when the tenant's link_preview_mode is ask_always" }),
  })
  .superRefine((v, ctx) => {
    if (v.carousel_data) {
      for (const field of notForCarousel) {
        if (v[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: "is not for a carousel (carousel_data)" });
      }
    } else messageBodyRules({ ...v, message: v.message ?? "", message_type: v.message_type ?? "text" }, ctx);
  })
  .meta({
    description:
      "The body of create-campaign/message or create-campaign/carousel (scheduled_at ignored: a test goes now). It is sent once to each of the " +
      "settings' test_groups, unpaced, and counted in no campaign or partner statistic. At most 10 per 10 minutes per tenant (429).",
  });

export const testSendStatus = z.enum(["sent", "failed", "unknown"]).meta({
  description: "sent: accepted by the platform; failed: not sent (error says why); unknown: the platform did not answer, it may have arrived",
});

export const sendTestOutput = z.object({
  success: z.literal(true),
  results: z.array(
    z.object({
      id_group: z.string(),
      id_channel: z.string(),
      status: testSendStatus,
      error: z.string().optional(),
      text: z.string().meta({ description: "The text sent (a carousel's text, then each card's, a line apart)" }),
      preview_of: z.string().optional().meta({ description: "With id_segment: the segment group whose text this is" }),
    }),
  ),
  timestamp: z.iso.datetime({ offset: true }),
});
