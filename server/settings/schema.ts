import { z } from "zod";
import { tokenSchema } from "../ids";
import { idGroup } from "../messaging/group-id";
import { defaultSettings as d } from "./defaults";

/**
 * Tenant settings (spec "Settings (tenant)", docs/decisions.md#settings). One set of field schemas serves the full
 * object (list-settings, edit-settings answers), the partial update (edit-settings body) and the
 * dashboard form; the descriptions carry units, bounds and defaults into the OpenAPI document.
 */

export const dayKeys = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;
export type DayKey = (typeof dayKeys)[number];

export const settingsLimits = {
  dispatchRateSeconds: 3600,
  campaignIntervalSeconds: 86400,
  dispatchesPerLoop: { min: 1, max: 100 },
  windowsPerDay: 48,
} as const;

// --- Leaf fields ---

const seconds = (max: number) =>
  z
    .number({ error: `must be a number of seconds from 0 to ${max}` })
    .min(0, `must be from 0 to ${max} seconds`)
    .max(max, `must be from 0 to ${max} seconds`);

const choice = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(", ")}` });

const flag = () => z.boolean({ error: "must be true or false" });

export const timeOfDay = z
  .string({ error: "must be a time HH:mm from 00:00 to 23:59" })
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be a time HH:mm from 00:00 to 23:59")
  .meta({ description: "Time of day, HH:mm on a 24-hour clock (00:00–23:59), Brasília time (America/Sao_Paulo).", example: "08:00" });

const { dispatch_rates: dr, preferences: pf, queue: qu, sending_schedule: ss, number_health: nh } = d;
const R = settingsLimits.dispatchRateSeconds;
const I = settingsLimits.campaignIntervalSeconds;
const L = settingsLimits.dispatchesPerLoop;

const dispatchRatesShape = {
  min_dispatch_rate: seconds(R).meta({
    description: `Seconds, 0–${R}, at most max_dispatch_rate. Shortest random pause between two loops of one campaign. Default ${dr.min_dispatch_rate}.`,
  }),
  max_dispatch_rate: seconds(R).meta({
    description: `Seconds, 0–${R}, at least min_dispatch_rate. Longest random pause between two loops of one campaign. Default ${dr.max_dispatch_rate}.`,
  }),
  dispatches_per_loop: z
    .number({ error: `must be an integer from ${L.min} to ${L.max}` })
    .int(`must be an integer from ${L.min} to ${L.max}`)
    .min(L.min, `must be an integer from ${L.min} to ${L.max}`)
    .max(L.max, `must be an integer from ${L.min} to ${L.max}`)
    .meta({ description: `Integer, ${L.min}–${L.max}. Messages sent in one loop, before the pause. Default ${dr.dispatches_per_loop}.` }),
  min_campaign_interval: seconds(I).meta({
    description: `Seconds, 0–${I}, at most max_campaign_interval. Shortest random pause between two queued campaigns. Default ${dr.min_campaign_interval}.`,
  }),
  max_campaign_interval: seconds(I).meta({
    description: `Seconds, 0–${I}, at least min_campaign_interval. Longest random pause between two queued campaigns. Default ${dr.max_campaign_interval}.`,
  }),
};

const preferencesShape = {
  link_preview_mode: choice(["ask_always", "always", "never"]).meta({
    description: `ask_always: each campaign's link_preview decides; always / never: every campaign. Default ${pf.link_preview_mode}.`,
  }),
  link_preview_type: choice(["auto", "large", "small"]).meta({
    description: `Size of the link preview: auto (the platform chooses), large or small. Default ${pf.link_preview_type}.`,
  }),
  forward_message_enabled: flag().meta({
    description: `true: send once, then forward to the remaining groups where the provider can. Default ${pf.forward_message_enabled}.`,
  }),
};

const queueShape = {
  concurrent_mode: choice(["disabled", "per_channel", "enabled"]).meta({
    description:
      "disabled: one campaign at a time per tenant, first in first out by start time; per_channel: one at a time per channel; " +
      `enabled: no queue, campaigns run side by side. Default ${qu.concurrent_mode}.`,
  }),
};

/** The bounds of the `number_health` fields (CONTRACT §7 "Budgets"); a channel's `limits` take the same. */
export const numberHealthLimits = {
  daily_message_cap: { min: 1, max: 100_000 },
  warmup_days: { min: 0, max: 60 },
  warmup_first_day_cap: { min: 1, max: 10_000 },
  min_send_gap_seconds: { min: 0, max: 3600 },
  group_create_cap: { min: 0, max: 200 },
} as const;

const count = (field: keyof typeof numberHealthLimits) => {
  const { min, max } = numberHealthLimits[field];
  const text = `must be an integer from ${min} to ${max}`;
  return z.number({ error: text }).int(text).min(min, text).max(max, text);
};
const NL = numberHealthLimits;

/** The `number_health` fields; the descriptions end with the tenant default (a channel's `limits` say null keeps it). */
export const numberHealthShape = {
  daily_message_cap: count("daily_message_cap")
    .nullable()
    .meta({
      description:
        `null (no cap) or ${NL.daily_message_cap.min}–${NL.daily_message_cap.max.toLocaleString("en")}: messages one channel may send per Brasília day ` +
        `(campaign sends and monitoring copies; 00:00–24:00 America/Sao_Paulo). Enforced when a send is claimed: a channel that reaches it is \`capped\` until the next 00:00. Default ${nh.daily_message_cap}.`,
    }),
  warmup_days: count("warmup_days").meta({
    description: `${NL.warmup_days.min}–${NL.warmup_days.max}: days from a channel's first pairing during which its daily cap ramps up (state \`warming\`); 0 = no warm-up. Default ${nh.warmup_days}.`,
  }),
  warmup_first_day_cap: count("warmup_first_day_cap").meta({
    description:
      `${NL.warmup_first_day_cap.min}–${NL.warmup_first_day_cap.max.toLocaleString("en")}: the cap on warm-up day 1; each following warm-up day × 1.5, rounded up, ` +
      `never above daily_message_cap when that is set. Default ${nh.warmup_first_day_cap}.`,
  }),
  min_send_gap_seconds: seconds(NL.min_send_gap_seconds.max).meta({
    description:
      `Seconds, ${NL.min_send_gap_seconds.min}–${NL.min_send_gap_seconds.max}: the least time between two sends of one channel, whatever campaigns they belong to ` +
      `(each campaign's own pacing still applies on top). Default ${nh.min_send_gap_seconds}.`,
  }),
  group_create_cap: count("group_create_cap").meta({
    description: `${NL.group_create_cap.min}–${NL.group_create_cap.max}: groups one channel may create per Brasília day (launches). Default ${nh.group_create_cap}.`,
  }),
};

const windowShape = { start: timeOfDay, end: timeOfDay };
const windowsMeta = {
  description:
    `Sending windows of the day, at most ${settingsLimits.windowsPerDay}, each start < end, sorted by start and not overlapping ` +
    "(one may begin where the previous ends). When non-empty they replace start/end. Default [].",
};

const dayMeta = (full: boolean) => ({
  description: `One day of the sending schedule: start < end${full ? "" : " after the edit"}. Default enabled 08:00–20:00 with no windows.`,
});

const dayFieldsShape = {
  enabled: flag().meta({ description: "Whether campaigns may send on this day. Default true." }),
  start: timeOfDay.meta({ description: "Start of the day's sending hours, HH:mm (Brasília time). Before end. Default 08:00." }),
  end: timeOfDay.meta({ description: "End of the day's sending hours, HH:mm (Brasília time). After start. Default 20:00.", example: "20:00" }),
};

/** A field's description ending with its default value. */
const withDefault = (text: string, value: unknown) => `${text} Default ${String(value)}.`;

const scheduleFieldsShape = {
  enabled: flag().meta({ description: `true: campaigns send only inside the days' hours or windows. Default ${ss.enabled}.` }),
  finish_queued_on_end: flag().meta({
    description: withDefault(
      "true: a campaign already sending when its window closes runs to the end; false: it pauses until the next window.",
      ss.finish_queued_on_end,
    ),
  }),
  finish_queued_mode: choice(["same_day", "between_days"]).meta({
    description: withDefault(
      "With finish_queued_on_end: same_day finishes only until midnight; between_days finishes even past midnight.",
      ss.finish_queued_mode,
    ),
  }),
  cancel_outside_hours: flag().meta({
    description: withDefault(
      "true: a campaign whose start falls outside every window is canceled; false: it waits for the next window.",
      ss.cancel_outside_hours,
    ),
  }),
  cancel_mode: choice(["between_days", "always"]).meta({
    description: withDefault(
      "With cancel_outside_hours: between_days cancels only when the next window is on a later day; always cancels every time.",
      ss.cancel_mode,
    ),
  }),
};

const perDay = <T extends z.ZodType>(day: T) => ({
  monday: day,
  tuesday: day,
  wednesday: day,
  thursday: day,
  friday: day,
  saturday: day,
  sunday: day,
});

/** At most this many test groups (send-test sends to each). */
export const testGroupsMax = 5;

const testGroupShape = {
  id_channel: tokenSchema("channel").meta({ description: "One of the tenant's channels" }),
  id_group: idGroup.meta({ description: "A group that channel reaches (checked against the platform when saved)" }),
};
const testGroupsMeta = {
  description:
    `Up to ${testGroupsMax} groups that POST /api/external/send-test sends to (docs/decisions.md#test-send): each channel must be the tenant's ` +
    "(404 otherwise) and reach its group (400). The list is replaced whole. Default none.",
};

// --- The full settings object (answers) ---

const windowSchema = z.object(windowShape).meta({ description: "A sending window: start < end (HH:mm)." });
export const daySchedule = z.object({ ...dayFieldsShape, windows: z.array(windowSchema).meta(windowsMeta) }).meta(dayMeta(true));

export const settingsSchema = z
  .object({
    dispatch_rates: z.object(dispatchRatesShape).meta({ description: "Pacing of a campaign and of the campaign queue (all times in seconds)." }),
    preferences: z.object(preferencesShape).meta({ description: "How messages are sent." }),
    queue: z.object(queueShape).meta({ description: "How campaigns of the tenant wait for each other." }),
    number_health: z
      .object(numberHealthShape)
      .meta({ description: "A number's budget: what one channel may send and create a day, and how fast (docs/numbers.md#budgets)." }),
    test_groups: z.array(z.object(testGroupShape)).meta(testGroupsMeta),
    sending_schedule: z
      .object({
        ...scheduleFieldsShape,
        days: z.object(perDay(daySchedule)).meta({ description: "Keys monday … sunday, each a day object." }),
      })
      .meta({ description: "When campaigns may send." }),
  })
  .meta({ description: "The tenant's settings, every field present." });

export type Settings = z.infer<typeof settingsSchema>;

// --- The partial update (edit-settings body) ---

/** Unknown properties are refused by name, with the allowed ones. */
const strictFields = <S extends z.ZodRawShape>(shape: S) =>
  z.strictObject(shape, {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? `unknown propert${iss.keys.length > 1 ? "ies" : "y"} ${iss.keys.join(", ")} (allowed: ${Object.keys(shape).join(", ")})`
        : undefined,
  });

/** Every field optional, unknown ones refused, and at least one present (an empty object changes nothing and is a mistake). */
const partialOf = <S extends z.ZodRawShape>(shape: S) =>
  strictFields(shape)
    .partial()
    .refine((v) => Object.values(v).some((x) => x !== undefined), {
      message: `send at least one of ${Object.keys(shape).join(", ")}`,
      when: (payload) => payload.issues.length === 0,
    });

const windowInput = strictFields(windowShape).meta({ description: "A sending window: start < end (HH:mm)." });
const dayPatch = partialOf({
  ...dayFieldsShape,
  windows: z
    .array(windowInput)
    .max(settingsLimits.windowsPerDay, `at most ${settingsLimits.windowsPerDay} windows per day`)
    .meta({ description: `${windowsMeta.description} Replaces the day's whole list.` }),
}).meta(dayMeta(false));

export const settingsSections = ["dispatch_rates", "preferences", "queue", "number_health", "test_groups", "sending_schedule"] as const;

export const editSettingsInput = z
  .strictObject(
    {
      dispatch_rates: partialOf(dispatchRatesShape).meta({ description: "Only the fields to change." }).optional(),
      preferences: partialOf(preferencesShape).meta({ description: "Only the fields to change." }).optional(),
      queue: partialOf(queueShape).meta({ description: "Only the fields to change." }).optional(),
      number_health: partialOf(numberHealthShape).meta({ description: "Only the fields to change." }).optional(),
      test_groups: z.array(strictFields(testGroupShape)).max(testGroupsMax, `at most ${testGroupsMax} test groups`).meta(testGroupsMeta).optional(),
      sending_schedule: partialOf({
        ...scheduleFieldsShape,
        days: partialOf(perDay(dayPatch)).meta({ description: "Only the days to change (keys monday … sunday), each with only the fields to change." }),
      })
        .meta({ description: "Only the fields to change." })
        .optional(),
    },
    {
      error: (iss) =>
        iss.code === "unrecognized_keys"
          ? `unknown propert${iss.keys.length > 1 ? "ies" : "y"} ${iss.keys.join(", ")} (allowed: ${settingsSections.join(", ")})`
          : undefined,
    },
  )
  // No refinement here (trpc-to-openapi would then document the body as non-strict): an empty body is refused by editSettings.
  .meta({
    description:
      "Partial update: only the sections and fields to change. Unknown properties and empty objects are refused. " +
      "After merging into the current settings: min ≤ max for rates and intervals, each day's start < end, windows sorted and not overlapping.",
  });

export type SettingsPatch = z.infer<typeof editSettingsInput>;

// --- Answers ---

export const listSettingsOutput = z.object({ success: z.literal(true), settings: settingsSchema });

export const editSettingsOutput = z.object({
  success: z.literal(true),
  updated: z.array(z.string()).meta({
    description:
      "Dotted paths of the fields whose value changed, e.g. dispatch_rates.min_dispatch_rate or sending_schedule.days.monday.windows " +
      "(a day's windows list counts as one field). Empty when every value sent equals the current one.",
    example: ["dispatch_rates.min_dispatch_rate"],
  }),
  settings: settingsSchema,
});

// --- Rules across fields, checked on the merged result ---

export interface SettingsViolation {
  /** Dotted field, e.g. sending_schedule.days.monday.windows.1 */
  path: string;
  message: string;
}

type Section<K extends keyof Settings> = Partial<Record<keyof Settings[K], unknown>>;

/**
 * Rules that span fields, on the settings as they would be after the edit. `sent` (the patch) decides
 * which field of a pair is named: the one the caller changed (min when both or neither).
 */
export function settingsRuleViolations(s: Settings, sent: SettingsPatch = {}): SettingsViolation[] {
  const out: SettingsViolation[] = [];
  const rates = s.dispatch_rates;
  const sentRates: Section<"dispatch_rates"> = sent.dispatch_rates ?? {};
  const pair = (min: "min_dispatch_rate" | "min_campaign_interval", max: "max_dispatch_rate" | "max_campaign_interval") => {
    if (rates[min] <= rates[max]) return;
    if (sentRates[max] !== undefined && sentRates[min] === undefined) {
      out.push({ path: `dispatch_rates.${max}`, message: `must be ≥ ${min} (${rates[min]})` });
    } else {
      out.push({ path: `dispatch_rates.${min}`, message: `must be ≤ ${max} (${rates[max]})` });
    }
  };
  pair("min_dispatch_rate", "max_dispatch_rate");
  pair("min_campaign_interval", "max_campaign_interval");

  for (const key of dayKeys) {
    const day = s.sending_schedule.days[key];
    const sentDay = sent.sending_schedule?.days?.[key];
    const base = `sending_schedule.days.${key}`;
    if (day.start >= day.end) {
      if (sentDay?.end !== undefined && sentDay.start === undefined) out.push({ path: `${base}.end`, message: `must be after start (${day.start})` });
      else out.push({ path: `${base}.start`, message: `must be before end (${day.end})` });
    }
    day.windows.forEach((w, i) => {
      if (w.start >= w.end) out.push({ path: `${base}.windows.${i}.start`, message: `must be before end (${w.end})` });
      if (i === 0) return;
      const prev = day.windows[i - 1];
      const prevText = `windows.${i - 1} (${prev.start}–${prev.end})`;
      if (w.start < prev.start) out.push({ path: `${base}.windows.${i}`, message: `starts before ${prevText}; list windows sorted by start` });
      else if (w.start < prev.end) out.push({ path: `${base}.windows.${i}`, message: `overlaps ${prevText}` });
    });
  }
  return out;
}
