import { z } from "zod";
import { text, urlMaxLength } from "../text";
import { eventTypes, type EventType } from "./events";

export const webhookTypes = eventTypes;
export type WebhookType = EventType;

/** The config field that holds each type's URL. */
export const urlField = {
  campaign_status: "campaign_status_url",
  campaign_progress: "campaign_progress_url",
  channel_status: "channel_status_url",
  group_activity: "group_activity_url",
} as const satisfies Record<WebhookType, string>;

const urlOut = z.string().nullable().meta({ description: "Where this kind of event is POSTed; null when disabled." });

export const webhookUrls = z.object({
  campaign_status_url: urlOut,
  campaign_progress_url: urlOut,
  channel_status_url: urlOut,
  group_activity_url: urlOut,
});

export const listWebhooksOutput = z.object({
  success: z.literal(true),
  webhooks: webhookUrls.extend({
    signing_secret: z.string().meta({
      description: "Standard Webhooks secret (`whsec_<base64>`): verify with `new Webhook(secret).verify(body, headers)` from the `standardwebhooks` package.",
    }),
  }),
});

const urlIn = z
  .union([text({ max: urlMaxLength }), z.null()])
  .optional()
  .meta({
    description:
      'An http(s) URL; `""` or null disables. Private, loopback, link-local and reserved targets are refused (400 naming the field) in any ' +
      "spelling: IPv4 in decimal, octal or hex, IPv4 inside IPv6 (`[::ffff:127.0.0.1]`, `[::7f00:1]`, NAT64), `localhost.` and other internal " +
      "names (`*.local`, `*.internal`, a single label), or a name that resolves to such an address. `WEBHOOK_ALLOW_PRIVATE=1` lifts the rule.",
  });

export const editWebhooksInput = z
  .object({ campaign_status_url: urlIn, campaign_progress_url: urlIn, channel_status_url: urlIn, group_activity_url: urlIn })
  .strict()
  .refine((v) => Object.values(v).some((x) => x !== undefined), {
    message: "send at least one of campaign_status_url, campaign_progress_url, channel_status_url, group_activity_url",
  });
export type EditWebhooksInput = z.infer<typeof editWebhooksInput>;

export const editWebhooksOutput = z.object({
  success: z.literal(true),
  message: z.string(),
  updated: z.array(z.string()).meta({ description: "The URL fields whose value changed." }),
  webhooks: webhookUrls,
});

export const testWebhookInput = z.object({ type: z.enum(webhookTypes) });

export const testWebhookOutput = z.object({
  success: z.literal(true),
  message: z.string(),
  status: z.number().int().meta({ description: "The receiver's HTTP status; 0 when it could not be reached (refused, time-out, blocked address)." }),
});

export const deliveryStateFilter = z.enum(["pending", "delivered", "failed", "canceled"]);

export const listDeliveriesInput = z.object({
  type: z.enum(webhookTypes).optional(),
  state: deliveryStateFilter.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const rotateSecretOutput = z.object({ signing_secret: z.string(), previous_valid_until: z.string() });
