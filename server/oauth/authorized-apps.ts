import { and, asc, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { oauthGrants, partnerApps } from "../../db/schema";
import { revokeGrant } from "./tokens";

/** Apps this tenant has authorized and not revoked, one entry per app (scopes of all its grants). */
export async function listAuthorizedApps(db: Db, tenantId: string) {
  const rows = await db
    .select({ grant: oauthGrants, app: partnerApps })
    .from(oauthGrants)
    .innerJoin(partnerApps, eq(partnerApps.id, oauthGrants.appId))
    .where(and(eq(oauthGrants.tenantId, tenantId), isNull(oauthGrants.revokedAt)))
    .orderBy(asc(oauthGrants.createdAt));
  const byApp = new Map<string, { client_id: string; name: string; logo_url: string; homepage_url: string; scopes: string[]; authorized_at: string }>();
  for (const { grant, app } of rows) {
    const entry = byApp.get(app.id) ?? {
      client_id: app.id,
      name: app.name,
      logo_url: app.logoUrl,
      homepage_url: app.homepageUrl,
      scopes: [],
      authorized_at: grant.createdAt.toISOString(),
    };
    entry.scopes = [...new Set([...entry.scopes, ...grant.scopes])];
    byApp.set(app.id, entry);
  }
  return [...byApp.values()];
}

/** "Revogar acesso": every grant of the app for this tenant, and every token issued under them. */
export async function revokeAppAccess(db: Db, tenantId: string, clientId: string, now: Date) {
  const grants = await db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.tenantId, tenantId), eq(oauthGrants.appId, clientId), isNull(oauthGrants.revokedAt)));
  await db.transaction((tx) =>
    revokeGrant(
      tx,
      grants.map((g) => g.id),
      now,
    ),
  );
  return grants.length;
}
