/**
 * Repeating campaigns (docs/series.md): the `repeat` object create-campaign takes (message, carousel; poll reuses
 * it), and the series endpoints' inputs and answers.
 */
import { z } from "zod";
import { messageTypes, seriesStatuses } from "../../db/schema";
import { tokenSchema } from "../ids";
import { dayKeys, timeOfDay } from "../settings/schema";
import { name, text } from "../text";
import { campaignLimits } from "./limits";

export const seriesStatus = z.enum(seriesStatuses).meta({
  description: "active (runs are created at their times) ⇄ paused (runs due meanwhile are skipped) → stopped (delete-series; for good)",
});
export type SeriesStatus = z.infer<typeof seriesStatus>;

export const idSeries = tokenSchema("series").meta({ example: "series_0b7e6c8e-3f7a-4c39-9d55-2a1f0c7d5e11" });

const weekday = z.enum(dayKeys, { error: `must be one of ${dayKeys.join(", ")}` });

/** DD/MM/YYYY; that it is a real date in the future is checked with the request's time (parseUntil). */
const untilDate = z
  .string({ error: "must be a date DD/MM/YYYY" })
  .regex(/^\d{2}\/\d{2}\/\d{4}$/, "must be a date DD/MM/YYYY")
  .meta({ description: "The last Brasília date a run may fall on, DD/MM/YYYY, today or later (a run of that day included)", example: "20/12/2026" });

export const repeatShape = {
  days: z
    .array(weekday)
    .min(1, "must name at least one day")
    .max(7, "must name at most 7 days")
    .refine((d) => new Set(d).size === d.length, "must not repeat a day")
    .meta({ description: "Weekdays of the runs: monday … sunday", example: ["monday", "wednesday", "friday"] }),
  time: timeOfDay.meta({ description: "Time of each run, HH:mm, Brasília time (America/Sao_Paulo)", example: "19:00" }),
  until: untilDate,
};

export const repeat = z
  .object(repeatShape)
  .strict()
  .meta({
    description:
      "Makes the campaign a series (repeating campaign): each run is a campaign of its own (own id_campaign, statistics and webhooks, " +
      "carrying id_series). The series always has its next run as a scheduled campaign: the answer's id_campaign is the first run " +
      "(status pending, scheduled_at its time) and id_series names the series; each following run is created when the one before it " +
      "starts. Runs are paced, queued and held to the sending windows like any campaign. Not with scheduled_at. " +
      "list-series, edit-series and delete-series manage it.",
  });
export type Repeat = z.infer<typeof repeat>;

export const repeatOutput = z.object({
  days: z.array(weekday),
  time: z.string().meta({ description: "HH:mm, Brasília time" }),
  until: z.string().meta({ description: "DD/MM/YYYY" }),
});

export const seriesOutput = z.object({
  id_series: z.string(),
  name: z.string(),
  status: seriesStatus,
  message_type: z.enum(messageTypes),
  id_segment: z.string(),
  segment_name: z.string(),
  message: z.string().meta({ description: "The text (or caption; a carousel's message) each run sends" }),
  repeat: repeatOutput,
  next_run_at: z
    .string()
    .nullable()
    .meta({ description: "ISO 8601 with offset: the time of the next run (next_id_campaign); null when paused, stopped or past until" }),
  next_id_campaign: z
    .string()
    .nullable()
    .meta({ description: "The next run: a scheduled campaign (status pending) made ahead of time; edit-series changes or cancels it" }),
  last_run_at: z.string().nullable().meta({ description: "The time of the latest run whose time came (ISO 8601 with offset)" }),
  runs: z.number().int().meta({ description: "Runs whose time came so far (a canceled run not counted)" }),
  last_id_campaign: z.string().nullable().meta({ description: "The latest run whose time came (info-campaign)" }),
  created_at: z.string(),
});

export const listSeriesOutput = z.object({ success: z.literal(true), series: z.array(seriesOutput) });

export const seriesAction = z.object({ id_series: idSeries });

export const editSeriesInput = z
  .object({
    id_series: idSeries,
    status: z
      .enum(["active", "paused"], { error: "must be active or paused (delete-series stops a series)" })
      .optional()
      .meta({
        description:
          "paused: the future run is canceled and none is made until active again; active: resumes with the next occurrence after now " +
          "(those that passed while paused are skipped, not caught up)",
      }),
    name: name().optional(),
    message: text({ max: campaignLimits.message })
      .optional()
      .meta({ description: "New text for the future run and those after it (the caption of a media series; a carousel's message)" }),
    repeat: z
      .object({ days: repeatShape.days.optional(), time: repeatShape.time.optional(), until: untilDate.optional() })
      .strict()
      .optional()
      .meta({ description: "New schedule; the fields given replace the old ones; the future run is canceled and the new schedule's next one made" }),
  })
  .strict()
  .superRefine((v, ctx) => {
    const { id_series: _id, ...changes } = v;
    if (Object.values(changes).every((x) => x === undefined))
      ctx.addIssue({ code: "custom", path: [], message: "give at least one of status, name, message, repeat" });
  });
export type EditSeriesInput = z.infer<typeof editSeriesInput>;

export const seriesChangeOutput = z.object({ success: z.literal(true), series: seriesOutput, updated: z.array(z.string()) });
export const deleteSeriesOutput = z.object({ success: z.literal(true), message: z.string(), series: seriesOutput });
