/**
 * Launches (docs/decisions.md#launches): the inputs and answers of create-launch, edit-launch,
 * launch-groups and info-launch, shared by the REST facade, tRPC (the dashboard) and the OpenAPI document.
 */
import { z } from "zod";
import { launchGroupStatuses, launchStatuses } from "../../../db/schema";
import { withVariations } from "../../campaigns/schema";
import { idChannel, idGroup } from "../../channels/schema";
import { tokenSchema } from "../../ids";
import { illFormedMessage, isIllFormed, mediaUrl, name, text, urlMaxLength } from "../../text";

export const idLaunch = tokenSchema("launch").meta({ example: "launch_7c9e6679-7425-40de-944b-e07fc1f90ae7" });

export const slugPattern = /^[a-z0-9-]{3,60}$/;
export const launchSlug = z
  .string()
  .regex(slugPattern, "must be 3 to 60 characters: lowercase letters, digits and hyphens")
  .meta({
    description:
      "The public part of the join link `{app_url}/g/{slug}`; unique across the service. Without it one is made from the name " +
      "(`-2`, `-3`, … when taken; a random one when the name has fewer than 3 usable characters). A slug once used stays its launch's " +
      "forever: after a change the old link still leads to the same launch, and the old slug is 409 `slug_taken` for every other launch, of any account.",
    example: "turma-7",
  });

/**
 * Where a paused or closed link sends people (docs/decisions.md#the-join-link-in-detail, "closed_url"): https only, at most
 * 2,048 characters once normalised, and kept in its normalised form (`new URL(v).href`: host lower case and
 * punycode, non-ASCII percent-encoded), so the link's Location header is always plain ASCII.
 */
export const closedUrl = z
  .url({ protocol: /^https$/, error: "must be an https URL" })
  .max(urlMaxLength, `must be at most ${urlMaxLength} characters`)
  .refine((v) => !isIllFormed(v), illFormedMessage)
  // Zod runs the later checks after a failed one too: an unparseable value is left as it is (already refused).
  .overwrite((v) => URL.parse(v)?.href ?? v)
  .refine((v) => v.length <= urlMaxLength, `must be at most ${urlMaxLength} characters once normalised (non-ASCII characters percent-encoded)`)
  .meta({
    description:
      "Where a paused or closed link sends people (302). https only, at most 2,048 characters; stored and answered in its normalised " +
      "form (`new URL(v).href`: e.g. `https://Exemplo.com/espera/€` becomes `https://exemplo.com/espera/%E2%82%AC`), and the limit applies to that form.",
    example: "https://example.com/lista-de-espera",
  });

/** A phone number as WhatsApp shows it: digits with the country code, no `+`. */
export const phoneNumber = z
  .string()
  .regex(/^[1-9][0-9]{7,14}$/, "must be a phone number: digits with the country code, e.g. 5511987654321")
  .meta({
    description:
      "Digits with the country code. A Brazilian mobile may be given with or without its ninth digit: it is compared both ways " +
      "(WhatsApp reports many numbers of DDD 31 and above without it).",
    example: "5511987654321",
  });

export const launchStatus = z
  .enum(launchStatuses)
  .meta({ description: "active: the link rotates; paused / closed: the link sends to closed_url (or a closed page)" });
export const launchGroupStatus = z.enum(launchGroupStatuses).meta({
  description: "filling (the link sends here), reserve (ready, next in line), full (at capacity − margin; stays full), broken (vanished or no longer admin)",
});

/** WhatsApp's group subject holds at most 100 characters; `{n}` grows by up to 3 digits. */
export const templateNameMaxLength = 90;

const templateFields = {
  name: text({ max: templateNameMaxLength, min: 1, trim: true }).meta({
    description: "The group's name; `{n}` is replaced by the group's position in the launch (1, 2, …).",
    example: "Turma 7 #{n}",
  }),
  description: text({ max: 2048 }),
  image_url: mediaUrl().meta({ description: "The group's picture (https, public)." }),
  admins_only: z.boolean().meta({ description: "Only admins may post (announcements)." }),
  admins: z.array(phoneNumber).max(50, "must list at most 50 numbers").meta({ description: "Numbers promoted to admin in every group." }),
};

export const groupTemplate = z.object({
  name: templateFields.name,
  description: templateFields.description.optional(),
  image_url: templateFields.image_url.optional(),
  admins_only: templateFields.admins_only.default(false),
  admins: templateFields.admins.default([]),
});

/** edit-launch: the fields sent replace the template's; the others stay (no defaults here). */
const groupTemplateChanges = z.object(templateFields).partial();

const channelList = z.array(idChannel).min(1, "must list at least one channel").max(20, "must list at most 20 channels");
const staffList = z.array(phoneNumber).max(1000, "must list at most 1000 numbers");

export const adoptGroups = z.object({
  id_channel: idChannel.meta({ description: "The channel that has the groups (one of the launch's id_channel)." }),
  groups: z.array(idGroup).min(1, "must list at least one group").max(100, "must list at most 100 groups"),
});

const capacity = z.number().int().min(1).max(1024).meta({ description: "Most people a group holds (WhatsApp: 1024)." });
const margin = z.number().int().min(0).max(200).meta({ description: "A group is full at capacity − margin members." });
const reserve = z.number().int().min(0).max(5).meta({ description: "Groups kept ready ahead of need." });

/** Per launch traffic alert (docs/launches.md#traffic-alerts). */
const alertFields = {
  clicks_without_joins_minutes: z
    .number()
    .int()
    .min(0)
    .max(1440)
    .meta({ description: "Window in minutes (0–1440): this many minutes of clicks and no join send a traffic_alert. 0 turns the alert off." }),
  min_clicks: z.number().int().min(1).max(100_000).meta({ description: "Counted clicks in the window that make it an alert (1–100,000)." }),
};
export const launchAlerts = z
  .object({ clicks_without_joins_minutes: alertFields.clicks_without_joins_minutes.default(20), min_clicks: alertFields.min_clicks.default(30) })
  .meta({
    description:
      "Traffic alert: when `min_clicks` counted clicks arrived in the last `clicks_without_joins_minutes` and no lead joined, a `group_activity` " +
      "`traffic_alert` webhook is sent (at most once an hour per launch) and the dashboard shows a banner.",
  });
const launchAlertChanges = z.object(alertFields).partial();

/** Buyer removal (CONTRACT §9; docs/launches.md#buyers-leave-the-groups). */
const buyerFields = {
  remove_from_groups: z.boolean().meta({
    description:
      "On a purchase approved by a marketplace's webhook, the buyer is removed from each of the launch's groups they are in (within 60 s, through an " +
      "admin number of the group, exactly once per person and group). Never the tenant's own numbers, the template's admins or staff.",
  }),
  dry_run: z.boolean().meta({ description: "Nothing is removed and no event is sent: info-launch's totals.buyers_in_groups shows who would be." }),
};
export const launchBuyers = z
  .object({ remove_from_groups: buyerFields.remove_from_groups.default(false), dry_run: buyerFields.dry_run.default(false) })
  .meta({ description: "Buyers leave the lead groups (docs/launches.md#buyers-leave-the-groups)." });
const launchBuyerChanges = z.object(buyerFields).partial();

/** Moderation (CONTRACT §9; docs/moderation.md): joins (country codes, blocklist) and members' messages (links, banned words, floods) are judged. */
const hostname = z
  .string()
  .max(253)
  .regex(/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be a hostname in lower case, e.g. example.com")
  .meta({ example: "example.com" });
const moderationFields = {
  mode: z.enum(["off", "shadow", "enforce"]).meta({
    description: "off: nothing judged; shadow: every decision recorded as would_delete / would_remove and nothing done; enforce: done.",
  }),
  block_links: z.boolean().meta({
    description:
      "A message with a link breaks the rule, but for allowed_domains: http(s)://…, www.…, or a bare host under a common top-level domain " +
      "(an invite to another WhatsApp group, chat.whatsapp.com/…, and wa.me/… included). Text and media captions are read.",
  }),
  allowed_domains: z
    .array(hostname)
    .max(50, "must list at most 50 hostnames")
    .meta({ description: "Links to these hostnames or their subdomains are allowed." }),
  banned_words: z
    .array(z.string().trim().min(1).max(60))
    .max(200, "must list at most 200 words")
    .meta({ description: "Matched as whole words (or phrases), case- and accent-insensitive: grátis matches GRATIS, not gratisfeito." }),
  max_messages_per_minute: z.number().int().min(1).max(60).nullable().meta({
    description: "Per member and group in a rolling minute (the platform's time of each message); each message past it breaks the rule. null: no flood rule.",
  }),
  strikes_to_remove: z
    .number()
    .int()
    .min(1)
    .max(10)
    .meta({
      description:
        "In enforce, every message deleted gives its sender a strike (any rule, any group of the launch); at this many the member is removed. " +
        "Shadow counts would_delete decisions instead and records would_remove. Undo (undo-moderation) clears a person's strikes.",
    }),
  country_codes: z
    .array(z.string().regex(/^[1-9][0-9]{0,3}$/, "must be a calling code: 1–4 digits, e.g. 55"))
    .min(1)
    .max(50)
    .nullable()
    .meta({ description: 'The calling codes a member\'s number must start with (e.g. ["55"]); a join from another is removed. null: any.' }),
};
export const launchModeration = z
  .object({
    mode: moderationFields.mode.default("off"),
    block_links: moderationFields.block_links.default(true),
    allowed_domains: moderationFields.allowed_domains.default([]),
    banned_words: moderationFields.banned_words.default([]),
    max_messages_per_minute: moderationFields.max_messages_per_minute.default(null),
    strikes_to_remove: moderationFields.strikes_to_remove.default(3),
    country_codes: moderationFields.country_codes.default(null),
  })
  .meta({ description: "Moderation of the launch's groups (docs/moderation.md)." });
const launchModerationChanges = z.object(moderationFields).partial();
export const launchModerationOut = z.object({
  mode: z.enum(["off", "shadow", "enforce"]),
  block_links: z.boolean(),
  allowed_domains: z.array(z.string()),
  banned_words: z.array(z.string()),
  max_messages_per_minute: z.number().int().nullable(),
  strikes_to_remove: z.number().int(),
  country_codes: z.array(z.string()).nullable(),
});

/**
 * Meta Conversions API (docs/launches.md#metas-conversions-api; docs/decisions.md#metas-conversions-api-issue-27-item-2):
 * the fields of `tracking.meta`. The pixel id goes into the request's path, so it is digits only.
 */
const metaFields = {
  pixel_id: z
    .string()
    .max(30, "must be at most 30 characters")
    .regex(/^[0-9]{1,30}$/, "must be the pixel's (dataset's) numeric id")
    .meta({ description: "The Meta pixel (dataset) id the events go to: digits, as Events Manager shows it.", example: "123456789012345" }),
  access_token: text({ max: 1000, min: 1, trim: true }).meta({
    description:
      "A Conversions API access token of the pixel (Events Manager → Settings → Generate access token). Stored encrypted (AES-256-GCM) " +
      "and never answered: info-launch says only `access_token_set: true`.",
  }),
  event_name: text({ max: 100, min: 1, trim: true }).meta({
    description: "The event each counted click sends: a standard event (`Lead`, `CompleteRegistration`, …) or a custom one. Default `Lead`.",
    example: "Lead",
  }),
  test_event_code: text({ max: 100, min: 1, trim: true }).meta({
    description: "Events Manager's test code (`TEST12345`): the events show in its Test Events tab and are not used for ads. Leave it out in production.",
    example: "TEST12345",
  }),
};
const metaTrackingDescription =
  "Meta Conversions API: each counted click of the join link sends one server event to this pixel, after the redirect (never delaying it), " +
  "retried on the webhooks' schedule; see docs/launches.md, \"Meta's Conversions API\".";
export const metaTracking = z
  .object({
    pixel_id: metaFields.pixel_id,
    access_token: metaFields.access_token,
    event_name: metaFields.event_name.default("Lead"),
    test_event_code: metaFields.test_event_code.optional(),
  })
  .meta({ description: metaTrackingDescription });
export type MetaTrackingInput = z.output<typeof metaTracking>;

/** edit-launch: the fields sent replace the launch's; `test_event_code: null` removes the code. */
const metaTrackingChanges = z
  .object({
    pixel_id: metaFields.pixel_id.optional(),
    access_token: metaFields.access_token.optional().meta({
      description: "A new access token; left out, the stored one stays. Required when the launch has no tracking.meta yet.",
    }),
    event_name: metaFields.event_name.optional(),
    test_event_code: metaFields.test_event_code.nullable().optional(),
  })
  .meta({ description: metaTrackingDescription });
export type MetaTrackingChanges = z.output<typeof metaTrackingChanges>;

export const launchTrackingOut = z.object({
  meta: z
    .object({
      pixel_id: z.string(),
      event_name: z.string(),
      test_event_code: z.string().nullable(),
      access_token_set: z.literal(true).meta({ description: "The token is stored (encrypted); it is never answered." }),
    })
    .nullable()
    .meta({ description: "The Meta Conversions API settings; null: no events are sent." }),
});

/**
 * The welcome (CONTRACT §8 "Welcome"; docs/launches.md#welcome): per group, one message for each batch of newcomers, sent once
 * `after_joins` people joined since the group's last welcome or `max_wait_minutes` after the first of them.
 */
export const launchWelcome = z
  .object({
    text: withVariations(text({ max: 1000, min: 1 })).meta({
      description:
        "The message (1–1,000 characters). Variations and variables as in campaigns: {Olá|Oi} picks one option per batch; {{grupo}} is the " +
        "group's name, {{data}} dd/mm and {{hora}} HH:mm in Brasília when the batch is made. Bad braces or an unknown variable: 400 naming welcome.text.",
      example: "{Bem-vindos|Boas-vindas} ao {{grupo}}! Leiam a descrição do grupo.",
    }),
    after_joins: z.number().int().min(1).max(100).default(10).meta({ description: "Newcomers per welcome (1–100, default 10)." }),
    max_wait_minutes: z
      .number()
      .int()
      .min(1)
      .max(120)
      .default(10)
      .meta({ description: "A batch of fewer newcomers goes this long after its first join (1–120 minutes, default 10)." }),
    mention_new: z
      .boolean()
      .default(true)
      .meta({ description: "Mention the newcomers: one @<number> each on a last line of the text, and the message's mentions (default true)." }),
  })
  .meta({
    description:
      "Welcome each group's newcomers: one message per batch (after_joins joins, or max_wait_minutes after the first), through the group's numbers " +
      "within their budgets, exactly once per batch. The tenant's own numbers, the template's admins and staff_numbers are not welcomed. null: off.",
  });
export type LaunchWelcomeInput = z.output<typeof launchWelcome>;

/** margin must leave room in a group: 400 naming margin. */
function marginBelowCapacity(v: { capacity?: number; margin?: number }, ctx: z.RefinementCtx) {
  if (v.capacity !== undefined && v.margin !== undefined && v.margin >= v.capacity) {
    ctx.addIssue({ code: "custom", message: "must be less than capacity", path: ["margin"] });
  }
}

export const createLaunchInput = z
  .object({
    name: name(),
    slug: launchSlug.optional(),
    id_channel: channelList,
    group_template: groupTemplate,
    capacity: capacity.default(1000),
    margin: margin.default(20),
    auto_create: z.boolean().default(true),
    reserve: reserve.default(1),
    staff_numbers: staffList.default([]),
    status: launchStatus.default("active"),
    closed_url: closedUrl.optional(),
    initial_groups: z.number().int().min(0).max(20).default(1).meta({ description: "Groups created now from the template." }),
    adopt: adoptGroups.optional().meta({ description: "Existing groups appended in order (after the created ones)." }),
    alerts: launchAlerts.default({ clicks_without_joins_minutes: 20, min_clicks: 30 }),
    buyers: launchBuyers.default({ remove_from_groups: false, dry_run: false }),
    moderation: launchModeration.optional(),
    tracking: z.object({ meta: metaTracking.optional() }).optional().meta({ description: "Server-side tracking of the join link's clicks." }),
    welcome: launchWelcome.nullable().optional(),
  })
  .superRefine(marginBelowCapacity);
export type CreateLaunchInput = z.output<typeof createLaunchInput>;

export const launchGroup = z.object({
  position: z.number().int(),
  id_group: z.string(),
  id_channel: z.string(),
  name: z.string(),
  invite_url: z.string().nullable(),
  members: z.number().int(),
  clicks: z.number().int(),
  status: launchGroupStatus,
  unreached: z
    .array(
      z.object({
        id_channel: z.string(),
        reason: z.string().meta({
          description:
            "Why the platform has not got this number in the group: its status for the add (403 privacy, 408 left recently, …), not_added (the creation " +
            "dropped it: not on WhatsApp), not_admin (in, but not an admin where only admins post), not_in_group (a send was refused: it is no longer " +
            "in it), unconfirmed (the group could not be read back), no_number (the channel's number is not known).",
        }),
        attempts: z.number().int().meta({ description: "Adds (and promotions) tried again so far; at most 8." }),
        next_attempt_at: z.iso
          .datetime({ offset: true })
          .nullable()
          .meta({ description: "When it is added again (5 min after the failure, doubling to 1 h); null: the attempts are spent." }),
        since: z.iso.datetime({ offset: true }),
      }),
    )
    .meta({
      description:
        "The launch's channels that do not reach this group although the launch put them there: the platform refused or dropped the number, or a " +
        "send through it was refused as not in the group. They send nothing to it (its deliveries go through the channels that reach it) until the " +
        "platform lists them in it; the launch pass adds and promotes them again with backoff. Empty when every channel reaches the group.",
    }),
});
export type LaunchGroupOut = z.output<typeof launchGroup>;

export const createLaunchOutput = z.object({
  success: z.literal(true),
  id_launch: z.string(),
  name: z.string(),
  slug: z.string(),
  join_url: z.string(),
  id_segment: z.string(),
  status: launchStatus,
  capacity: z.number().int(),
  margin: z.number().int(),
  groups: z.array(launchGroup),
  timestamp: z.iso.datetime({ offset: true }),
});

/** Fields a client may not change: edit-launch answers 400 naming them. */
export const immutableLaunchFields = ["join_url", "id_segment"] as const;

const editLaunchFields = z.object({
  id_launch: idLaunch,
  name: name().optional(),
  slug: launchSlug.optional(),
  id_channel: channelList.optional(),
  group_template: groupTemplateChanges.optional(),
  capacity: capacity.optional(),
  margin: margin.optional(),
  auto_create: z.boolean().optional(),
  reserve: reserve.optional(),
  staff_numbers: staffList.optional(),
  status: launchStatus.optional(),
  closed_url: closedUrl
    .nullable()
    .optional()
    .meta({
      description:
        "Where a paused or closed link sends people: https only, at most 2,048 characters once normalised, stored and answered as " +
        "`new URL(v).href`; null removes it (the closed page is shown).",
    }),
  alerts: launchAlertChanges.optional().meta({ description: "The traffic alert's fields sent replace the launch's; the others stay." }),
  buyers: launchBuyerChanges.optional().meta({ description: "The buyer-removal fields sent replace the launch's; the others stay." }),
  moderation: launchModerationChanges.optional().meta({ description: "The moderation fields sent replace the launch's; the others stay." }),
  tracking: z
    .object({
      meta: metaTrackingChanges.nullable().optional().meta({
        description: "The fields sent replace the launch's (a new pixel needs pixel_id and access_token); null turns the Meta events off.",
      }),
    })
    .optional(),
  welcome: launchWelcome
    .nullable()
    .optional()
    .meta({ description: "The whole welcome (its defaults fill what is left out); null turns it off. Joins before it is turned on are not welcomed." }),
});
/** Unknown fields are kept while parsing only to name join_url / id_segment in the 400. */
export const editLaunchInput = editLaunchFields.loose().superRefine((v, ctx) => {
  for (const field of immutableLaunchFields) {
    if (field in v) ctx.addIssue({ code: "custom", message: "cannot be changed", path: [field] });
  }
  marginBelowCapacity(v, ctx);
});
export type LaunchChanges = Omit<z.output<typeof editLaunchFields>, "id_launch">;

export const launchGroupsInput = z
  .object({
    id_launch: idLaunch,
    create: z.number().int().min(1).max(20).optional().meta({ description: "Groups to create now from the template." }),
    adopt: adoptGroups.optional(),
  })
  .refine((v) => v.create !== undefined || v.adopt !== undefined, { message: "send create and/or adopt", path: ["body"] });

export const launchGroupsOutput = z.object({ success: z.literal(true), id_launch: z.string(), groups: z.array(launchGroup) });

export const infoLaunchInput = z.object({ id_launch: idLaunch });

export const currentGroup = z.object({ position: z.number().int(), id_group: z.string(), name: z.string(), invite_url: z.string() });

export const launchTotals = z.object({
  groups: z.number().int(),
  members: z.number().int().meta({ description: "Everyone in the launch's groups now (staff included)." }),
  unique_members: z.number().int().meta({ description: "Distinct leads who ever joined any group of the launch (staff excluded)." }),
  clicks: z
    .number()
    .int()
    .meta({
      description:
        "Visits of the join link sent to a group, over the launch's life; previews are not counted, nor more than 60 visits of one client " +
        "address (an IPv6 client by its /64) in 10 minutes.",
    }),
  unique_clicks: z.number().int().meta({ description: "Distinct visitors per day, summed over the days." }),
  joins: z.number().int(),
  leaves: z.number().int(),
  leads: z.number().int().meta({ description: "Distinct phones sent to launch-leads (docs/launches.md#leads)." }),
  leads_joined: z
    .number()
    .int()
    .meta({ description: "Of the leads, those who joined a group of the launch (by phone, or by a LID the launch's numbers paired with it)." }),
  welcomes_sent: z.number().int().meta({ description: "Welcome messages sent to the launch's groups (one per batch of newcomers)." }),
  buyers_removed: z.number().int().meta({
    description: "Removals of buyers from the launch's groups the platform confirmed (one per person and group; docs/launches.md#buyers-leave-the-groups).",
  }),
  buyers_in_groups: z
    .number()
    .int()
    .meta({
      description:
        "Buyers (approved, never refunded purchases) still members of one of the launch's groups now, staff, admins and the tenant's numbers excepted: " +
        "with dry_run, who would be removed.",
    }),
});

export const infoLaunchOutput = z.object({
  success: z.literal(true),
  id_launch: z.string(),
  name: z.string(),
  slug: z.string(),
  join_url: z.string(),
  status: launchStatus,
  id_segment: z.string(),
  id_channel: z.array(z.string()),
  group_template: z.object({
    name: z.string(),
    description: z.string().optional(),
    image_url: z.string().optional(),
    admins_only: z.boolean(),
    admins: z.array(z.string()),
  }),
  capacity: z.number().int(),
  margin: z.number().int(),
  auto_create: z.boolean(),
  reserve: z.number().int(),
  staff_numbers: z.array(z.string()),
  closed_url: z.string().nullable().meta({ description: "Where a paused or closed link sends people, in its normalised form; null: the closed page." }),
  alerts: z.object({ clicks_without_joins_minutes: z.number().int(), min_clicks: z.number().int() }),
  buyers: z.object({ remove_from_groups: z.boolean(), dry_run: z.boolean() }),
  moderation: launchModerationOut,
  tracking: launchTrackingOut,
  welcome: z
    .object({ text: z.string(), after_joins: z.number().int(), max_wait_minutes: z.number().int(), mention_new: z.boolean() })
    .nullable()
    .meta({ description: "The welcome of the groups' newcomers (docs/launches.md#welcome); null: off." }),
  traffic_alert: z
    .object({
      reason: z.literal("clicks_without_joins"),
      clicks: z.number().int().meta({ description: "Counted clicks in the window when the alert was sent." }),
      minutes: z.number().int(),
      at: z.iso.datetime({ offset: true }).meta({ description: "When the alert was sent." }),
    })
    .nullable()
    .meta({ description: "The latest traffic_alert while it is less than an hour old and no lead joined since; null otherwise." }),
  totals: launchTotals,
  current_group: currentGroup.nullable().meta({ description: "Where the link sends a visitor now; null: nowhere (the closed page)." }),
  groups: z.array(launchGroup),
  created_at: z.iso.datetime({ offset: true }),
});
export type InfoLaunchOutput = z.output<typeof infoLaunchOutput>;

export const launchSummary = z.object({
  id_launch: z.string(),
  name: z.string(),
  slug: z.string(),
  join_url: z.string(),
  status: launchStatus,
  groups: z.number().int(),
  members: z.number().int(),
  clicks: z.number().int(),
  created_at: z.iso.datetime({ offset: true }),
});
export const listLaunchesOutput = z.object({ launches: z.array(launchSummary) });
