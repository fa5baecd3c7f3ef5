import { and, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { partnerApps } from "../../db/schema";
import { BadRequest, NotFound } from "../errors";
import { webhookUrlProblem } from "../net/target-address";
import { registerAppInput, type RegisterAppInput } from "./schema";
import { autoApprovedScopes } from "./scopes";
import { newClientId, newSecret, sha256 } from "./secrets";

type App = typeof partnerApps.$inferSelect;

export const appSummary = (a: App) => ({
  client_id: a.id,
  name: a.name,
  logo_url: a.logoUrl,
  homepage_url: a.homepageUrl,
  privacy_url: a.privacyUrl,
  webhook_url: a.webhookUrl,
  redirect_uris: a.redirectUris,
  requested_scopes: a.requestedScopes,
  approved_scopes: a.approvedScopes,
  client_type: a.clientType,
  secret_rotated_at: a.secretRotatedAt?.toISOString() ?? null,
  created_at: a.createdAt.toISOString(),
});

/**
 * Registers an app for the developer's tenant. Approval: from the dashboard only the auto-approved
 * scopes (scopes.ts); the operator (admin CLI, `approveAll`) approves everything it registers.
 * The client secret is returned in clear once; only its SHA-256 is kept.
 */
export async function registerPartnerApp(db: Db, tenantId: string, raw: RegisterAppInput, opts: { approveAll?: boolean } = {}) {
  const input = registerAppInput.parse(raw);
  await checkWebhookUrl(input.webhook_url || null);
  const scopes = [...new Set(input.scopes)];
  const clientSecret = input.client_type === "confidential" ? newSecret("pcs") : undefined;
  const [app] = await db
    .insert(partnerApps)
    .values({
      id: newClientId(),
      tenantId,
      name: input.name,
      logoUrl: input.logo_url,
      homepageUrl: input.homepage_url,
      privacyUrl: input.privacy_url,
      webhookUrl: input.webhook_url || null,
      redirectUris: [...new Set(input.redirect_uris)],
      requestedScopes: scopes,
      approvedScopes: opts.approveAll ? scopes : autoApprovedScopes(scopes),
      clientType: input.client_type,
      clientSecretHash: clientSecret ? sha256(clientSecret) : null,
    })
    .returning();
  return { app, clientSecret };
}

export const listPartnerApps = (db: Db, tenantId: string) =>
  db.select().from(partnerApps).where(eq(partnerApps.tenantId, tenantId)).orderBy(desc(partnerApps.createdAt));

/** The developer's own app, or 404. */
export async function ownApp(db: Db, tenantId: string, clientId: string) {
  const [app] = await db
    .select()
    .from(partnerApps)
    .where(and(eq(partnerApps.id, clientId), eq(partnerApps.tenantId, tenantId)));
  if (!app) throw new NotFound("No such partner app.");
  return app;
}

/** A new secret for a confidential app; the old one stops working at once. */
export async function rotateClientSecret(db: Db, tenantId: string, clientId: string, now: Date) {
  const app = await ownApp(db, tenantId, clientId);
  if (app.clientType !== "confidential") throw new BadRequest("A public app has no client secret.");
  const clientSecret = newSecret("pcs");
  await db
    .update(partnerApps)
    .set({ clientSecretHash: sha256(clientSecret), secretRotatedAt: now })
    .where(eq(partnerApps.id, app.id));
  return { client_id: app.id, client_secret: clientSecret };
}

/** The app's webhook URL passes the same rule as an account's (no private, loopback or link-local targets). */
async function checkWebhookUrl(url: string | null) {
  const problem = url ? await webhookUrlProblem(url) : null;
  if (problem) throw new BadRequest(`webhook_url: ${problem}`);
}

export async function setWebhookUrl(db: Db, tenantId: string, clientId: string, webhookUrl: string | null) {
  await ownApp(db, tenantId, clientId);
  await checkWebhookUrl(webhookUrl);
  await db.update(partnerApps).set({ webhookUrl }).where(eq(partnerApps.id, clientId));
}

/** The operator approves requested scopes (admin CLI); scopes the app never requested are refused. */
export async function approvePartnerScopes(db: Db, clientId: string, scopes?: string[]) {
  const [app] = await db.select().from(partnerApps).where(eq(partnerApps.id, clientId));
  if (!app) throw new NotFound(`no partner app with client_id ${clientId}`);
  const wanted = scopes ?? app.requestedScopes;
  const unknown = wanted.filter((s) => !app.requestedScopes.includes(s));
  if (unknown.length) throw new BadRequest(`the app did not request: ${unknown.join(" ")}`);
  const approved = [...new Set([...app.approvedScopes, ...wanted])];
  await db.update(partnerApps).set({ approvedScopes: approved }).where(eq(partnerApps.id, app.id));
  return { client_id: app.id, approved_scopes: approved };
}
