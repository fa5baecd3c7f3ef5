import { and, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { tsParam } from "../../db/errors";
import { inJson } from "../../db/params";
import { oauthGrants, oauthTokens, partnerApps } from "../../db/schema";
import { decryptSecret, encryptSecret } from "../crypto/secret-box";
import { env } from "../env";
import { NotFound } from "../errors";
import type { WebhookType } from "./schema";
import { newSigningSecret } from "./signing";

/**
 * Partner apps' webhooks. An app with a webhook URL receives the campaign events (`campaign_status`,
 * `campaign_progress`) of every tenant that authorized it with `campaigns:read`, while that authorization
 * is alive (not revoked, and holding a token that is neither revoked nor expired). `channel_status` is not
 * sent to apps: no scope covers channels. Each delivery is a `webhook_deliveries` row with target
 * `app:<client_id>` and the tenant's id, so it is retried and ordered like the tenant's own; the body adds
 * `sub`, the tenant's id (the `sub` of its tokens), and is signed with the app's own secret.
 */
export const sentToApps: Record<WebhookType, boolean> = { campaign_status: true, campaign_progress: true, channel_status: false };

const appPrefix = "app:";
export const appTarget = (clientId: string) => `${appPrefix}${clientId}`;
export const appOfTarget = (target: string) => (target.startsWith(appPrefix) ? target.slice(appPrefix.length) : null);

/** The scope an app's authorization must hold for it to receive campaign events. */
const partnerScope = "campaigns:read";

/** An authorization that still lets the app act for the tenant, with the scope the events need. */
const liveGrant = (now: Date) =>
  and(
    isNull(oauthGrants.revokedAt),
    sql`${oauthGrants.scopes} @> ${JSON.stringify([partnerScope])}::jsonb`,
    sql`exists (select 1 from ${oauthTokens} k where k.grant_id = ${oauthGrants.id} and k.revoked_at is null and k.expires_at > ${tsParam(now)})`,
  );

/** For each tenant, the apps (client ids) that get its campaign events now. */
export async function appsListeningTo(db: Db | Tx, tenantIds: string[], now: Date): Promise<Map<string, string[]>> {
  const byTenant = new Map<string, string[]>();
  if (tenantIds.length === 0) return byTenant;
  const rows = await db
    .selectDistinct({ tenantId: oauthGrants.tenantId, appId: partnerApps.id })
    .from(oauthGrants)
    .innerJoin(partnerApps, eq(partnerApps.id, oauthGrants.appId))
    .where(and(inJson(oauthGrants.tenantId, tenantIds), isNotNull(partnerApps.webhookUrl), liveGrant(now)))
    .orderBy(oauthGrants.tenantId, partnerApps.id);
  for (const r of rows) byTenant.set(r.tenantId, [...(byTenant.get(r.tenantId) ?? []), r.appId]);
  return byTenant;
}

/** Where an app's delivery goes now and what signs it; no URL when the app dropped it or lost the tenant's grant. */
export async function appDestinations(db: Db | Tx, tenantId: string, clientIds: string[], now: Date) {
  const dest = new Map<string, { url: string | null; secrets: string[] }>();
  if (clientIds.length === 0) return dest;
  const apps = await db.select({ id: partnerApps.id, webhookUrl: partnerApps.webhookUrl }).from(partnerApps).where(inArray(partnerApps.id, clientIds));
  const live = new Set(
    (
      await db
        .selectDistinct({ appId: oauthGrants.appId })
        .from(oauthGrants)
        .where(and(eq(oauthGrants.tenantId, tenantId), inArray(oauthGrants.appId, clientIds), liveGrant(now)))
    ).map((r) => r.appId),
  );
  for (const app of apps) {
    dest.set(app.id, live.has(app.id) && app.webhookUrl ? { url: app.webhookUrl, secrets: await appSigningSecrets(db, app.id, now) } : { url: null, secrets: [] });
  }
  return dest;
}

/** The secrets that sign the app's deliveries now (the previous one during its grace period); made on first use. */
export async function appSigningSecrets(db: Db | Tx, clientId: string, now: Date): Promise<string[]> {
  const app = await withSecret(db, clientId);
  const secrets = [decryptSecret(app.webhookSecretEncrypted!)];
  if (app.previousWebhookSecretEncrypted && app.previousWebhookSecretExpiresAt && app.previousWebhookSecretExpiresAt > now) {
    secrets.push(decryptSecret(app.previousWebhookSecretEncrypted));
  }
  return secrets;
}

async function withSecret(db: Db | Tx, clientId: string) {
  const [app] = await db.select().from(partnerApps).where(eq(partnerApps.id, clientId));
  if (!app) throw new NotFound("No such partner app.");
  if (app.webhookSecretEncrypted) return app;
  await db
    .update(partnerApps)
    .set({ webhookSecretEncrypted: encryptSecret(newSigningSecret()) })
    .where(and(eq(partnerApps.id, clientId), sql`${partnerApps.webhookSecretEncrypted} is null`));
  const [made] = await db.select().from(partnerApps).where(eq(partnerApps.id, clientId));
  return made;
}

/** The developer portal: the app's current signing secret (the developer's own app only). */
export async function appWebhookSecret(db: Db, developerTenantId: string, clientId: string) {
  await ownApp(db, developerTenantId, clientId);
  const app = await withSecret(db, clientId);
  return { signing_secret: decryptSecret(app.webhookSecretEncrypted!) };
}

/** A new signing secret; the old one keeps signing beside it for WEBHOOK_SECRET_GRACE_HOURS (default 24). */
export async function rotateAppWebhookSecret(db: Db, developerTenantId: string, clientId: string, now: Date) {
  await ownApp(db, developerTenantId, clientId);
  const secret = newSigningSecret();
  const until = new Date(now.getTime() + env.webhooks.secretGraceHours * 3_600_000);
  await db.transaction(async (tx) => {
    const current = await withSecret(tx, clientId);
    await tx
      .update(partnerApps)
      .set({ webhookSecretEncrypted: encryptSecret(secret), previousWebhookSecretEncrypted: current.webhookSecretEncrypted, previousWebhookSecretExpiresAt: until })
      .where(eq(partnerApps.id, clientId));
  });
  return { signing_secret: secret, previous_valid_until: until.toISOString() };
}

/** A 410 Gone from the app's URL removes it from the app (only if it is still the configured one). */
export async function disableAppUrl(db: Db | Tx, clientId: string, url: string) {
  await db.update(partnerApps).set({ webhookUrl: null }).where(and(eq(partnerApps.id, clientId), eq(partnerApps.webhookUrl, url)));
}

async function ownApp(db: Db, tenantId: string, clientId: string) {
  const [app] = await db.select({ id: partnerApps.id }).from(partnerApps).where(and(eq(partnerApps.id, clientId), eq(partnerApps.tenantId, tenantId)));
  if (!app) throw new NotFound("No such partner app.");
}
