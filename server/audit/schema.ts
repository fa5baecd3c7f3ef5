import { z } from "zod";
import { auditActorTypes } from "../../db/schema";

const isoDate = (what: string) =>
  z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z" }).optional().meta({ description: what });

export const listAuditLogInput = z.object({
  since: isoDate("Entries at or after this instant."),
  until: isoDate("Entries before this instant."),
  actor_type: z.enum(auditActorTypes).optional().meta({ description: "Only this kind of actor." }),
  action: z.string().max(100).optional().meta({ description: "Only this action (e.g. campaign.create), or a prefix ending in a dot (campaign.)." }),
  cursor: z
    .string()
    .regex(/^\d{1,18}$/, "must be the next_cursor of a previous page")
    .optional()
    .meta({ description: "The previous page's next_cursor." }),
});

export const auditEntry = z.object({
  at: z.string().meta({ description: "ISO 8601, UTC." }),
  actor: z.object({
    type: z.enum(auditActorTypes),
    id: z.string().nullable(),
    label: z.string().nullable().meta({ description: "A member's e-mail, an API key's prefix, a partner app's name; never a secret." }),
  }),
  action: z.string().meta({ description: "e.g. campaign.create, member.invite, campaign.failover (docs/team.md#audit-actions)." }),
  target: z.string().nullable(),
  ip: z.string().nullable(),
  outcome: z.enum(["ok", "denied"]),
});

export const listAuditLogOutput = z.object({
  success: z.literal(true),
  entries: z.array(auditEntry),
  next_cursor: z.string().nullable().meta({ description: "Pass as cursor for the next (older) page; null on the last page." }),
});
