/**
 * A launch's leads (docs/launches.md#leads): the upload's input and answer, and the list's query and answer,
 * shared by the REST facade, tRPC (the dashboard) and the OpenAPI document.
 */
import { z } from "zod";
import { normalisePhone } from "../../phones/phone";
import { name, text } from "../../text";
import { launchMembersFile, launchMembersInput } from "./stats-schema";
import { idLaunch } from "../launch/schema";

export const leadsPerRequest = 10_000;
export const leadsPerPage = 500;
/** Leads a launch keeps at most (docs/launches.md#leads): an upload that would pass it is refused whole. */
export const leadsPerLaunch = 200_000;

const leadPhone = z
  .string()
  .max(40, "must be at most 40 characters")
  .transform((v, ctx) => {
    const phone = normalisePhone(v);
    if (phone === null) {
      ctx.addIssue({ code: "custom", message: "must be a phone number: digits with the country code (or a Brazilian DDD + number)" });
      return z.NEVER;
    }
    return phone;
  })
  .meta({
    description:
      "Digits with the country code; spaces, `+`, `-`, `.` and parentheses are ignored. Without a leading `+`, 10 or 11 digits are a " +
      "Brazilian DDD + number and get `55`. Stored as digits only.",
    example: "+55 (11) 98765-4321",
  });

export const lead = z.object({
  phone: leadPhone,
  name: name().optional(),
  email: z.email("must be an email address").max(254, "must be at most 254 characters").optional(),
  source: text({ max: 200, min: 1, trim: true }).optional().meta({ description: "Where the lead came from (a form, a campaign)." }),
});

export const uploadLeadsInput = z.object({
  id_launch: idLaunch,
  leads: z
    .array(lead)
    .min(1, "must list at least one lead")
    .max(leadsPerRequest, `must list at most ${leadsPerRequest} leads`)
    .meta({
      description:
        `Up to ${leadsPerRequest.toLocaleString("en")} leads. Idempotent by phone: a phone already among the launch's leads (or twice in ` +
        "the request: the last wins) updates that lead; a field left out keeps its value.",
    }),
});

export const uploadLeadsOutput = z.object({
  success: z.literal(true),
  id_launch: z.string(),
  received: z.number().int().meta({ description: "Leads in the request." }),
  created: z.number().int().meta({ description: "Phones new to the launch." }),
  updated: z.number().int().meta({ description: "Phones already among the launch's leads (or repeated in the request)." }),
  leads: z.number().int().meta({ description: "The launch's leads now." }),
  leads_joined: z.number().int().meta({ description: "Of them, those who joined a group of the launch." }),
  timestamp: z.iso.datetime(),
});

export const listLeadsInput = z.object({
  id_launch: idLaunch,
  status: z
    .enum(["all", "joined", "not_joined"])
    .default("all")
    .meta({ description: "`joined`: leads who joined a group of the launch; `not_joined`: the others (to send them the link again)." }),
  format: z
    .enum(["json", "csv"])
    .default("json")
    .meta({ description: `\`json\` (pages of ${leadsPerPage}, the default) or \`csv\` (every row, one file).` }),
  // As launch-members takes them.
  page: launchMembersInput.shape.page,
  delimiter: launchMembersInput.shape.delimiter,
});
export type ListLeadsQuery = z.output<typeof listLeadsInput>;

export const leadRow = z.object({
  phone: z.string().meta({ description: "Digits with the country code." }),
  name: z.string().nullable(),
  email: z.string().nullable(),
  source: z.string().nullable(),
  joined: z.boolean().meta({ description: "Whether they joined a group of the launch (by phone, or by a LID the launch's numbers paired with it)." }),
  created_at: z.iso.datetime({ offset: true }),
});

export const leadsPage = z.object({
  success: z.literal(true),
  status: z.enum(["all", "joined", "not_joined"]),
  page: z.number().int(),
  per_page: z
    .number()
    .int()
    .meta({ description: `Always ${leadsPerPage}.` }),
  total: z.number().int().meta({ description: "Leads of this status in all pages." }),
  leads: z.array(leadRow),
});

export const listLeadsOutput = z.union([leadsPage, launchMembersFile]);
