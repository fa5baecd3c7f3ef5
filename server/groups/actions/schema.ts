import { z } from "zod";
import { groupActionStates, groupActionStatuses, groupActionTypes } from "../../../db/schema";
import { tokenSchema } from "../../ids";
import { idLaunch } from "../../launches/launch/schema";
import { idSegment } from "../../segments/schema";
import { mediaUrl, name, text } from "../../text";

export const idAction = tokenSchema("action").meta({ example: "action_7c9e6679-7425-40de-944b-e07fc1f90ae7" });
export const groupActionStatus = z.enum(groupActionStatuses).meta({
  description: "scheduled (waiting for its time) → running → completed (every group done or failed) | canceled",
});
export const groupActionState = z.enum(groupActionStates.filter((s) => s !== "applying") as ["pending", "done", "failed", "canceled"]);
export const groupActionType = z.enum(groupActionTypes);

/** A phone number, digits with country code. */
const phone = z.string().regex(/^\d{10,15}$/, "must be a phone number with country code (10 to 15 digits)");

export const groupActionSpec = z.discriminatedUnion("type", [
  z.object({ type: z.literal("close_messages") }).meta({ description: "Only admins send (WhatsApp's announce on)" }),
  z.object({ type: z.literal("open_messages") }).meta({ description: "Everyone sends (announce off)" }),
  z.object({ type: z.literal("lock_info") }).meta({ description: "Only admins edit the group's info" }),
  z.object({ type: z.literal("unlock_info") }).meta({ description: "Everyone edits the group's info" }),
  z.object({
    type: z.literal("set_subject"),
    subject: text({ max: 100, min: 1, trim: true }).meta({
      description: "1–100 characters; {n} is the group's number in the launch, or its 1-based position in the segment",
      example: "Turma {n} — Aulas liberadas",
    }),
  }),
  z.object({ type: z.literal("set_description"), description: text({ max: 2048 }).meta({ description: "0–2048 characters" }) }),
  z.object({
    type: z.literal("set_picture"),
    picture_url: mediaUrl().meta({
      description: "https; an image/jpeg or image/png of at most 5 MB, fetched once when the action is created (private addresses refused)",
    }),
  }),
  z.object({ type: z.literal("promote"), participants: z.array(phone).min(1).max(20).meta({ description: "1–20 phones made admins" }) }),
  z.object({ type: z.literal("demote"), participants: z.array(phone).min(1).max(20).meta({ description: "1–20 admins made members" }) }),
  z.object({
    type: z.literal("remove"),
    participants: z.array(phone).min(1).max(200).meta({ description: "1–200 phones taken out of the groups (the account's own numbers refused)" }),
  }),
]);
export type GroupActionInput = z.infer<typeof groupActionSpec>;

export const createGroupActionInput = z
  .object({
    name: name().optional(),
    id_segment: idSegment.optional(),
    id_launch: idLaunch.optional().meta({ description: "The launch's groups when the action runs (groups created after scheduling included)" }),
    action: groupActionSpec,
    scheduled_at: text({ max: 64 })
      .meta({ description: "DD/MM/YYYY - HH:mm in Brasília time, strictly in the future; absent: now", example: "25/12/2026 - 22:00" })
      .optional(),
  })
  .superRefine((v, ctx) => {
    if ((v.id_segment === undefined) === (v.id_launch === undefined)) {
      ctx.addIssue({ code: "custom", path: ["id_segment"], message: "give exactly one of id_segment and id_launch" });
    }
  });

export const createGroupActionOutput = z.object({ success: z.literal(true), id_action: z.string() });

const groupCounts = z.object({ total: z.number(), done: z.number(), failed: z.number(), pending: z.number() });

export const groupActionView = z.object({
  id_action: z.string(),
  name: z.string().nullable(),
  status: groupActionStatus,
  action: z.object({
    type: groupActionType,
    subject: z.string().optional(),
    description: z.string().optional(),
    picture_url: z.string().optional(),
    participants: z.array(z.string()).optional(),
  }),
  id_segment: z.string().nullable(),
  id_launch: z.string().nullable(),
  scheduled_at: z.string().meta({ description: "ISO 8601, Brasília offset" }),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  created_at: z.string(),
  groups: groupCounts,
});

export const infoGroupActionInput = z.object({ id_action: idAction });
export const infoGroupActionOutput = groupActionView.extend({
  success: z.literal(true),
  results: z.array(
    z.object({
      id_group: z.string(),
      group_name: z.string().nullable().meta({ description: "The group's name as the target's segment holds it (null once it left the segment)" }),
      position: z.number().int().meta({ description: "{n}: the group's number in the launch, or its 1-based position in the segment" }),
      id_channel: z.string().nullable().meta({ description: "The number (channel) that applied it, or last tried" }),
      channel_name: z.string().nullable(),
      phone: z.string().nullable().meta({ description: "That channel's phone number" }),
      state: groupActionState,
      reason: z.string().nullable().meta({ description: "not_admin, group_gone, no_channel, platform_error: <the platform's words>; null unless failed" }),
      at: z.string().nullable(),
    }),
  ),
});

export const listGroupActionsInput = z.object({ id_launch: idLaunch.optional(), id_segment: idSegment.optional() });
export const listGroupActionsOutput = z.object({ success: z.literal(true), actions: z.array(groupActionView) });

export const cancelGroupActionOutput = z.object({ success: z.literal(true), id_action: z.string(), status: groupActionStatus });
