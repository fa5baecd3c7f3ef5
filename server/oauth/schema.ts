import { z } from "zod";
import { name, text } from "../text";
import { partnerScopes } from "../../db/schema";
import { redirectUriProblem } from "./redirect-uri";

const optionalHttpsUrl = text({ max: 2000, trim: true })
  .refine((v) => v === "" || /^https?:\/\//i.test(v), "must be an http(s) URL")
  .refine((v) => {
    if (v === "") return true;
    try {
      new URL(v);
      return true;
    } catch {
      return false;
    }
  }, "must be a valid URL")
  .default("");

export const redirectUri = text({ max: 2000, trim: true }).superRefine((v, ctx) => {
  const problem = redirectUriProblem(v);
  if (problem) ctx.addIssue({ code: "custom", message: `redirect URI ${problem}` });
});

/** Registering a partner app (dashboard form and admin CLI). */
export const registerAppInput = z.object({
  name: name(),
  logo_url: optionalHttpsUrl,
  homepage_url: optionalHttpsUrl,
  privacy_url: optionalHttpsUrl,
  webhook_url: optionalHttpsUrl,
  redirect_uris: z.array(redirectUri).min(1).max(10),
  scopes: z
    .array(z.enum(partnerScopes))
    .min(1)
    .max(partnerScopes.length * 2),
  client_type: z.enum(["public", "confidential"]),
});
export type RegisterAppInput = z.input<typeof registerAppInput>;

export const partnerAppSummary = z.object({
  client_id: z.string(),
  name: z.string(),
  logo_url: z.string(),
  homepage_url: z.string(),
  privacy_url: z.string(),
  webhook_url: z.string().nullable(),
  redirect_uris: z.array(z.string()),
  requested_scopes: z.array(z.string()),
  approved_scopes: z.array(z.string()),
  client_type: z.enum(["public", "confidential"]),
  secret_rotated_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
});

export const authorizedAppSummary = z.object({
  client_id: z.string(),
  name: z.string(),
  logo_url: z.string(),
  homepage_url: z.string(),
  scopes: z.array(z.string()),
  authorized_at: z.iso.datetime(),
});
