import { z } from "zod";
import { moderationActions, moderationRules } from "../../db/schema";
import { idLaunch, phoneNumber } from "../launches/launch/schema";

export const blocklistMax = 1000;
const phones = z.array(phoneNumber).max(blocklistMax, `must list at most ${blocklistMax} numbers`);

export const editBlocklistInput = z
  .object({ add: phones.default([]), remove: phones.default([]) })
  .meta({ description: "Numbers to add to and to take off the account's blocklist (digits with the country code; at most 1,000 each)." });

export const editBlocklistOutput = z.object({
  success: z.literal(true),
  added: z.number().int().meta({ description: "Numbers that were not on the list before." }),
  removed: z.number().int().meta({ description: "Numbers taken off (a number not on it counts nothing)." }),
  total: z.number().int(),
});

export const listBlocklistOutput = z.object({
  success: z.literal(true),
  numbers: z.array(z.object({ phone: z.string(), added_at: z.iso.datetime({ offset: true }) })),
  total: z.number().int(),
});

export const listModerationEventsInput = z.object({
  id_launch: idLaunch,
  cursor: z
    .string()
    .regex(/^[0-9]{1,18}$/, "must be the next_cursor of a previous page")
    .optional(),
});

export const moderationEvent = z.object({
  at: z.iso.datetime({ offset: true }),
  id_group: z.string(),
  participant: z.string(),
  rule: z.enum(moderationRules),
  action: z.enum(moderationActions),
  excerpt: z.string().meta({ description: "At most 100 characters of the message (empty for a join)." }),
});

export const listModerationEventsOutput = z.object({
  success: z.literal(true),
  events: z.array(moderationEvent),
  next_cursor: z.string().nullable().meta({ description: "Pass it as cursor for the older events; null: no more." }),
});

export const undoModerationInput = z.object({
  id_launch: idLaunch,
  id_group: z.string().min(1).max(200).meta({ description: "One of the launch's groups (the event's id_group).", example: "120363041234567890@g.us" }),
  participant: z
    .string()
    .min(1)
    .max(100)
    .meta({ description: "The person as the moderation event shows them: a number (digits) or a LID (`…@lid`).", example: "5511987654321" }),
});

export const undoModerationOutput = z.object({
  success: z.literal(true),
  invite_link: z.string().nullable().meta({ description: "The group's invite link to send the person (null: the group has none known)." }),
});
