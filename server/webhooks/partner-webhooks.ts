import { and, eq, inArray, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { tsParam } from "../../db/errors";
import { inJson } from "../../db/params";
import { oauthGrants, oauthTokens, partnerApps } from "../../db/schema";
import { decryptSecret, encryptSecret } from "../crypto/secret-box";
import { NotFound } from "../errors";
import type { WebhookType } from "./schema";
import { newSigningSecret } from "./signing";
import { previousSecretUntil, secretsInForce } from "./webhook-config";

/**
 * Partner apps' webhooks. An app with a webhook URL receives the campaign events (`campaign_status`,
 * `campaign_progress`) of every tenant that authorized it with `campaigns:read`, while that authorization
 * is alive (not revoked, and holding a token that is neither revoked nor expired). `channel_status` and
 * `group_activity` are not sent to apps: no scope covers channels or launches. Each delivery is a `webhook_deliveries` row with target
 * `app:<client_id>` and the tenant's id, so it is retried and ordered like the tenant's own; the body adds
 * `sub`, the tenant's id (the `sub` of its tokens), and is signed with the app's own secret.
 */
export const sentToApps: Record<WebhookType, boolean> = { campaign_status: true, campaign_progress: true, channel_status: false, group_activity: false };

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

/**
 * Whether some app gets `tenantId`'s campaign events now (SQL, `tenantId` an expression of the caller's row): the
 * condition of appsListeningTo, for the fan-out's drop of events nobody listens to (fan-out-events.ts).
 */
export const anyAppListensSql = (tenantId: SQL, now: Date) =>
  sql`exists (select 1 from ${oauthGrants} join ${partnerApps} on ${partnerApps.id} = ${oauthGrants.appId}
    where ${oauthGrants.tenantId} = ${tenantId} and ${partnerApps.webhookUrl} is not null and ${liveGrant(now)})`;

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
  const apps = await db.select().from(partnerApps).where(inArray(partnerApps.id, clientIds));
  const live = new Set(
    (
      await db
        .selectDistinct({ appId: oauthGrants.appId })
        .from(oauthGrants)
        .where(and(eq(oauthGrants.tenantId, tenantId), inArray(oauthGrants.appId, clientIds), liveGrant(now)))
    ).map((r) => r.appId),
  );
  for (const app of apps) {
    if (!live.has(app.id) || !app.webhookUrl) dest.set(app.id, { url: null, secrets: [] });
    else dest.set(app.id, { url: app.webhookUrl, secrets: appSecretsInForce(app.webhookSecretEncrypted ? app : await withSecret(db, app.id), now) });
  }
  return dest;
}

type AppRow = typeof partnerApps.$inferSelect;

const appSecretsInForce = (app: AppRow, now: Date) =>
  secretsInForce(app.webhookSecretEncrypted!, app.previousWebhookSecretEncrypted, app.previousWebhookSecretExpiresAt, now);

/** The app's row with a signing secret, made now if it has none yet (apps registered before migration 0008). */
async function withSecret(db: Db | Tx, clientId: string): Promise<AppRow> {
  await db
    .update(partnerApps)
    .set({ webhookSecretEncrypted: encryptSecret(newSigningSecret()) })
    .where(and(eq(partnerApps.id, clientId), isNull(partnerApps.webhookSecretEncrypted)));
  const [app] = await db.select().from(partnerApps).where(eq(partnerApps.id, clientId));
  if (!app) throw new NotFound("No such partner app.");
  return app;
}

/**
 * The developer's own app, or 404 (as server/oauth/partner-apps.ts `ownApp`; not imported from there so
 * that webhooks and oauth do not import each other: oauth's router calls into this file).
 */
async function ownApp(db: Db, developerTenantId: string, clientId: string): Promise<AppRow> {
  const [app] = await db
    .select()
    .from(partnerApps)
    .where(and(eq(partnerApps.id, clientId), eq(partnerApps.tenantId, developerTenantId)));
  if (!app) throw new NotFound("No such partner app.");
  return app;
}

/** The developer portal: the app's current signing secret (the developer's own app only). */
export async function appWebhookSecret(db: Db, developerTenantId: string, clientId: string) {
  const app = await ownApp(db, developerTenantId, clientId);
  const row = app.webhookSecretEncrypted ? app : await withSecret(db, clientId);
  return { signing_secret: decryptSecret(row.webhookSecretEncrypted!) };
}

/** A new signing secret; the old one keeps signing beside it for WEBHOOK_SECRET_GRACE_HOURS (default 24). */
export async function rotateAppWebhookSecret(db: Db, developerTenantId: string, clientId: string, now: Date) {
  await ownApp(db, developerTenantId, clientId);
  const secret = newSigningSecret();
  const until = previousSecretUntil(now);
  await db.transaction(async (tx) => {
    await withSecret(tx, clientId);
    // Locked, as the account's rotation does: two rotations at once must not lose the secret in between.
    const [current] = await tx.select().from(partnerApps).where(eq(partnerApps.id, clientId)).for("update");
    await tx
      .update(partnerApps)
      .set({
        webhookSecretEncrypted: encryptSecret(secret),
        previousWebhookSecretEncrypted: current.webhookSecretEncrypted,
        previousWebhookSecretExpiresAt: until,
      })
      .where(eq(partnerApps.id, clientId));
  });
  return { signing_secret: secret, previous_valid_until: until.toISOString() };
}

/** A 410 Gone from the app's URL removes it from the app (only if it is still the configured one). */
export async function disableAppUrl(db: Db | Tx, clientId: string, url: string) {
  await db
    .update(partnerApps)
    .set({ webhookUrl: null })
    .where(and(eq(partnerApps.id, clientId), eq(partnerApps.webhookUrl, url)));
}
