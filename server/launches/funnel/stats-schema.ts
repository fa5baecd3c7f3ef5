import { z } from "zod";
import { tokenSchema } from "../../ids";

/** The launch's id in a path (core16's schema has the same rule). */
export const idLaunchParam = tokenSchema("launch").meta({ example: "launch_5d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6" });

/** `days` outside 1–365 (or not a number) becomes 30 (docs/decisions.md#launch-endpoints). */
const days = z
  .preprocess((v) => {
    const n = typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : typeof v === "number" ? v : Number.NaN;
    return Number.isInteger(n) && n >= 1 && n <= 365 ? n : 30;
  }, z.number().int())
  .optional()
  .meta({ description: "Days back from today in Brasília time, today included (1–365; anything else is 30).", example: 30 });

export const launchAnalyticsInput = z.object({ id_launch: idLaunchParam, days });

export const launchAnalyticsOutput = z.object({
  success: z.literal(true),
  id_launch: z.string(),
  buyers: z
    .number()
    .int()
    .meta({
      description:
        "Distinct buyers of the period: leads or members of the launch with a purchase approved in the period (Brasília days), at or after the " +
        "launch's creation, by a marketplace's inbound webhook (docs/integrations.md), and not refunded or charged back since. Matched by phone " +
        "(LIDs through the launch's numbers' pairings); a checkout without a phone by the email of one of the account's leads.",
    }),
  days: z
    .array(
      z.object({
        date: z.string().meta({ description: "A day in Brasília time, YYYY-MM-DD; oldest first, one row per day." }),
        clicks: z.number().int(),
        unique_clicks: z.number().int().meta({ description: "Distinct visitors that day." }),
        joins: z.number().int().meta({ description: "Leads who joined a group that day (staff not counted)." }),
        leaves: z.number().int().meta({ description: "Leads who left a group that day (staff not counted)." }),
        members: z
          .number()
          .int()
          .meta({ description: "Everyone in the launch's groups at the end of that day (staff included); 0 on the days before the launch was created." }),
        buyers: z.number().int().meta({ description: "Distinct buyers (see `buyers`) whose purchase was approved that day; a refund takes them out." }),
      }),
    )
    .meta({ description: "Exactly one row per day of the period, oldest first, zeros included." }),
  by_source: z.array(z.object({ utm_source: z.string().nullable(), clicks: z.number().int() })).meta({
    description:
      "Clicks of the period by `utm_source`: the 20 largest sources, most first (ties by name; clicks without one are under null), " +
      'then one row `{"utm_source": "(outros)", "clicks": …}` with all the other sources\' clicks when there are any (a source sent as ' +
      '"(outros)" is counted in it). Days older than 90 are read from daily figures, which keep each day\'s 100 largest sources and ' +
      'the rest as "(outros)".',
  }),
  by_source_day: z.array(z.object({ date: z.string(), utm_source: z.string().nullable(), clicks: z.number().int() })).meta({
    description:
      'Clicks per day (Brasília, oldest first) and `utm_source`, for the sources listed in by_source (the others under "(outros)"); ' +
      "days and sources without clicks are left out.",
  }),
  by_utm: z
    .array(
      z.object({
        utm_source: z.string().nullable(),
        utm_medium: z.string().nullable(),
        utm_campaign: z.string().nullable(),
        utm_content: z.string().nullable().meta({ description: "Usually the ad." }),
        clicks: z.number().int(),
        unique_clicks: z.number().int().meta({ description: "Distinct visitors per day, summed over the days." }),
      }),
    )
    .meta({
      description:
        "Clicks of the period per combination of utm_source, utm_medium, utm_campaign and utm_content (stored lower case and trimmed, " +
        "at most 200 characters each; null: the tag was absent or empty): the 50 largest, most first, then one row with every tag " +
        '"(outros)" holding the rest when there is any. Read from the raw clicks, so at most the last 90 days.',
    }),
  groups: z
    .array(
      z.object({
        id_group: z.string(),
        name: z.string(),
        clicks: z.number().int().meta({ description: "Clicks of the period sent to this group." }),
        joins: z.number().int(),
        leaves: z.number().int(),
        members: z.number().int().meta({ description: "Everyone in the group now." }),
        buyers: z.number().int().meta({
          description: "Which group converted: the period's buyers who ever joined this group (one who joined two groups counts in both).",
        }),
      }),
    )
    .meta({ description: "The launch's groups in order, with the period's clicks, joins, leaves and buyers." }),
});
export type LaunchAnalytics = z.infer<typeof launchAnalyticsOutput>;

export const membersPerPage = 500;

export const launchMembersInput = z.object({
  id_launch: idLaunchParam,
  format: z.enum(["json", "csv"]).default("json").meta({ description: "`json` (pages of 500, the default) or `csv` (every row, one file)." }),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).meta({ description: "JSON page, from 1 (ignored for CSV)." }),
  delimiter: z
    .enum(["comma", "semicolon"])
    .default("comma")
    .meta({ description: "CSV separator: `semicolon` for spreadsheet locales that expect `;` (pt-BR Excel)." }),
});

export const launchMember = z.object({
  participant: z.string().meta({
    description:
      "A phone number (digits with country code), or WhatsApp's opaque id (`…@lid`) while none of the launch's channels learned its " +
      "number: a person seen by both is one person, shown by the number.",
  }),
  id_group: z.string(),
  group_name: z.string(),
  joined_at: z.iso.datetime({ offset: true }),
  left_at: z.iso.datetime({ offset: true }).nullable(),
  staff: z.boolean().meta({ description: "Staff numbers, the template's admins and the channels' own numbers: not leads." }),
  buyer: z.boolean().meta({
    description:
      "Whether this person bought: a purchase approved at or after the launch's creation by a marketplace's inbound webhook, never refunded " +
      "(launch-analytics `buyers`). Also the CSV's last column.",
  }),
});

export const launchMembersPage = z.object({
  success: z.literal(true),
  page: z.number().int(),
  per_page: z
    .number()
    .int()
    .meta({ description: `Always ${membersPerPage}.` }),
  total: z.number().int().meta({ description: "Rows in all pages: one per join (a re-join is a new row)." }),
  members: z.array(launchMember),
});

/** The CSV answer travels as a file the REST facade writes as it is (AppMeta `file`). */
export const launchMembersFile = z.object({
  file: z.object({ content_type: z.string(), file_name: z.string(), content: z.string() }),
});

export const launchMembersOutput = z.union([launchMembersPage, launchMembersFile]);

/** The launch page's Meta Conversions API log (dashboard only, server/launches/funnel/meta-log.ts). */
export const metaEventLogInput = z.object({ id_launch: idLaunchParam, limit: z.number().int().min(1).max(200).default(20) });

const metaEventState = z.enum(["pending", "sent", "failed", "canceled"]);
export const metaEventLogOutput = z.object({
  totals: z.record(metaEventState, z.number().int()),
  events: z.array(
    z.object({
      event_id: z.string(),
      event_name: z.string(),
      at: z.string(),
      state: metaEventState,
      attempts: z.number().int(),
      last_status: z.number().int().nullable(),
      last_error: z.string().nullable(),
      next_attempt_at: z.string().nullable(),
      finished_at: z.string().nullable(),
      fbc: z.boolean(),
    }),
  ),
});
