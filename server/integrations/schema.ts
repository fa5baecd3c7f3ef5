import { z } from "zod";
import { name, text } from "../text";
import { allFields, credentialFields, credentialFieldsDescription, integrationTypes, type IntegrationType } from "./types";

export const integrationType = z.enum(integrationTypes, { error: `must be one of ${integrationTypes.join(", ")}` }).meta({
  description: `The marketplace. Credential fields per type — ${credentialFieldsDescription}.`,
});

const credentialValue = text({ max: 1000, min: 1, trim: true });
const credentialField = text({ max: 64 });
const label = name();

/** Unknown fields are refused by name, so a typo never silently drops a credential. */
function checkFields(type: IntegrationType, credentials: Record<string, unknown>, ctx: z.RefinementCtx, requireAll: boolean) {
  const known = allFields(type);
  for (const field of Object.keys(credentials)) {
    if (!known.includes(field))
      ctx.addIssue({ code: "custom", path: ["credentials", field], message: `is not a credential of ${type} (fields: ${known.join(", ")})` });
  }
  if (requireAll) {
    for (const field of credentialFields[type].required) {
      if (credentials[field] === undefined) ctx.addIssue({ code: "custom", path: ["credentials", field], message: `is required for ${type}` });
    }
  }
}

export const createIntegrationInput = z
  .object({
    type: integrationType,
    label: label.optional(),
    credentials: z.record(credentialField, credentialValue).meta({ description: `Fields per type — ${credentialFieldsDescription}.` }),
  })
  .superRefine((v, ctx) => checkFields(v.type, v.credentials, ctx, true));

export const editIntegrationInput = z
  .object({
    type: integrationType,
    label: label.optional(),
    credentials: z
      .record(credentialField, credentialValue.nullable())
      .optional()
      .meta({ description: "Merged into the stored credentials; `null` clears an optional field." }),
  })
  .superRefine((v, ctx) => {
    if (v.label === undefined && (v.credentials === undefined || Object.keys(v.credentials).length === 0)) {
      ctx.addIssue({ code: "custom", path: ["credentials"], message: "is required: send the credential fields to change (or a label)" });
      return;
    }
    if (!v.credentials) return;
    checkFields(v.type, v.credentials, ctx, false);
    for (const [field, value] of Object.entries(v.credentials)) {
      if (value === null && credentialFields[v.type].required.includes(field)) {
        ctx.addIssue({ code: "custom", path: ["credentials", field], message: `is required for ${v.type} and cannot be cleared` });
      }
    }
  });

export const integration = z.object({
  id_integration: z.string().meta({ description: "Equals the integration type." }),
  label: z.string(),
  configured: z.boolean(),
  fields: z.record(z.string(), z.boolean()).meta({ description: "Each credential field of the type: set or not. Values are never returned." }),
  webhook_url: z
    .string()
    .nullable()
    .meta({
      description:
        "The URL to register as the marketplace's webhook (purchases and refunds: buyers of your launches, docs/integrations.md). " +
        "Authenticated the marketplace's way: Hotmart's hottok (credential `hottok`), Kiwify's signature (credential `webhook_token`). " +
        "null for eduzz, monetizze and braip, whose webhook could not be confirmed from their documentation (their URL answers 501).",
    }),
  created_at: z.iso.datetime({ offset: true }),
  updated_at: z.iso.datetime({ offset: true }),
});

export const integrationOutput = z.object({ success: z.literal(true), message: z.string(), integration });
