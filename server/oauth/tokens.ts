import { and, eq, inArray, isNull } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import type { Db, Tx } from "../../db/client";
import { oauthCodes, oauthGrants, oauthTokens, type partnerApps } from "../../db/schema";
import { recordAudit } from "../audit/record-audit";
import { OAuthError } from "./errors";
import { parseScope } from "./scopes";
import { accessTokenLifetimeMs, newSecret, refreshTokenLifetimeMs, s256, sha256 } from "./secrets";

type App = typeof partnerApps.$inferSelect;

/** The audit entry of something the app itself did (docs/team.md#audit-actions): the actor labelled with its name. */
const appAudit = (tx: Db, app: App, tenantId: string, action: string, target: string, at: Date, ip?: string) =>
  recordAudit(tx, { tenantId, actor: { type: "partner_app", id: app.id, label: app.name }, action, target, ip: ip ?? null, at });

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** One access token and one refresh token for the grant. */
async function issueTokens(tx: Tx, grantId: string, scopes: string[], now: Date): Promise<TokenResponse> {
  const access = newSecret("pat");
  const refresh = newSecret("prt");
  await tx.insert(oauthTokens).values([
    { id: randomUUID(), grantId, kind: "access", tokenHash: sha256(access), scopes, expiresAt: new Date(now.getTime() + accessTokenLifetimeMs) },
    { id: randomUUID(), grantId, kind: "refresh", tokenHash: sha256(refresh), scopes, expiresAt: new Date(now.getTime() + refreshTokenLifetimeMs) },
  ]);
  return { access_token: access, token_type: "Bearer", expires_in: accessTokenLifetimeMs / 1000, refresh_token: refresh, scope: scopes.join(" ") };
}

/** Revokes a grant and every token issued under it (code replay, refresh reuse, user's "revoke access"). */
export async function revokeGrant(db: Db | Tx, grantIds: string[], now: Date) {
  if (grantIds.length === 0) return;
  await db
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(and(inArray(oauthGrants.id, grantIds), isNull(oauthGrants.revokedAt)));
  await db
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(inArray(oauthTokens.grantId, grantIds), isNull(oauthTokens.revokedAt)));
}

type Outcome = { ok: true; tokens: TokenResponse } | { ok: false; error: OAuthError };
const fail = (error: string, description: string): Outcome => ({ ok: false, error: new OAuthError(error, description) });

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is burned on first
 * presentation; presenting it again revokes everything issued from it.
 */
export async function exchangeCode(db: Db, app: App, form: URLSearchParams, now: Date, ip?: string): Promise<TokenResponse> {
  const code = form.get("code");
  if (!code) throw new OAuthError("invalid_request", "code is required.");
  const outcome = await db.transaction(async (tx): Promise<Outcome> => {
    const [row] = await tx
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256(code)))
      .for("update");
    if (!row || row.appId !== app.id) return fail("invalid_grant", "The authorization code is invalid.");
    if (row.usedAt) {
      if (row.grantId) await revokeGrant(tx, [row.grantId], now);
      return fail("invalid_grant", "The authorization code was already used; the tokens issued from it are revoked.");
    }
    await tx.update(oauthCodes).set({ usedAt: now }).where(eq(oauthCodes.codeHash, row.codeHash));
    if (row.expiresAt <= now) return fail("invalid_grant", "The authorization code has expired.");
    if (form.get("redirect_uri") !== row.redirectUri) return fail("invalid_grant", "redirect_uri does not match the authorization request.");
    const verifier = form.get("code_verifier");
    // Every code carries an S256 challenge (authorize.ts); one without is from before PKCE was required of every app.
    if (!row.codeChallenge) return fail("invalid_grant", "The authorization code was issued without PKCE; authorize again with code_challenge (S256).");
    if (!verifier) return fail("invalid_grant", "code_verifier is required (PKCE).");
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || s256(verifier) !== row.codeChallenge)
      return fail("invalid_grant", "code_verifier does not match the code_challenge.");
    const grantId = randomUUID();
    await tx.insert(oauthGrants).values({ id: grantId, appId: app.id, tenantId: row.tenantId, userId: row.userId, scopes: row.scopes });
    await tx.update(oauthCodes).set({ grantId }).where(eq(oauthCodes.codeHash, row.codeHash));
    await appAudit(tx, app, row.tenantId, "partner_app.authorize", grantId, now, ip);
    return { ok: true, tokens: await issueTokens(tx, grantId, row.scopes, now) };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.tokens;
}

/**
 * grant_type=refresh_token (RFC 6749 §6): rotation. The presented refresh token is revoked and a new
 * pair issued; a revoked one presented again means it leaked, so the whole grant is revoked.
 */
export async function refreshTokens(db: Db, app: App, form: URLSearchParams, now: Date): Promise<TokenResponse> {
  const presented = form.get("refresh_token");
  if (!presented) throw new OAuthError("invalid_request", "refresh_token is required.");
  const outcome = await db.transaction(async (tx): Promise<Outcome> => {
    const [row] = await tx
      .select({ token: oauthTokens, grant: oauthGrants })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(and(eq(oauthTokens.tokenHash, sha256(presented)), eq(oauthTokens.kind, "refresh")))
      .for("update");
    if (!row || row.grant.appId !== app.id) return fail("invalid_grant", "The refresh token is invalid.");
    if (row.grant.revokedAt) return fail("invalid_grant", "The authorization was revoked.");
    if (row.token.revokedAt) {
      await revokeGrant(tx, [row.grant.id], now);
      return fail("invalid_grant", "The refresh token was already used; the authorization is revoked.");
    }
    if (row.token.expiresAt <= now) return fail("invalid_grant", "The refresh token has expired.");
    let scopes = row.token.scopes;
    if (form.get("scope") !== null) {
      const asked = parseScope(form.get("scope"));
      const beyond = asked.filter((s) => !row.grant.scopes.includes(s));
      if (beyond.length) return { ok: false, error: new OAuthError("invalid_scope", `scope: beyond the original grant: ${beyond.join(" ")}.`) };
      if (asked.length) scopes = asked;
    }
    await tx.update(oauthTokens).set({ revokedAt: now }).where(eq(oauthTokens.id, row.token.id));
    return { ok: true, tokens: await issueTokens(tx, row.grant.id, scopes, now) };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.tokens;
}

/** A token of this client, by its clear value (revocation and introspection). */
export async function findClientToken(db: Db, app: App, token: string) {
  const [row] = await db
    .select({ token: oauthTokens, grant: oauthGrants })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, sha256(token)));
  return row && row.grant.appId === app.id ? row : undefined;
}

/** RFC 7009: a refresh token takes its whole grant with it; an access token only itself. Unknown tokens are fine. */
export async function revokeToken(db: Db, app: App, token: string, now: Date, ip?: string) {
  const row = await findClientToken(db, app, token);
  if (!row) return;
  await db.transaction(async (tx) => {
    if (row.token.kind === "refresh") await revokeGrant(tx, [row.grant.id], now);
    else
      await tx
        .update(oauthTokens)
        .set({ revokedAt: now })
        .where(and(eq(oauthTokens.id, row.token.id), isNull(oauthTokens.revokedAt)));
    await appAudit(tx, app, row.grant.tenantId, `partner_app.revoke_${row.token.kind}_token`, row.grant.id, now, ip);
  });
}

/** RFC 7662 §2.2. */
export async function introspectToken(db: Db, app: App, token: string, now: Date, issuer: string) {
  const row = await findClientToken(db, app, token);
  if (!row || row.token.revokedAt || row.grant.revokedAt || row.token.expiresAt <= now) return { active: false as const };
  return {
    active: true as const,
    scope: row.token.scopes.join(" "),
    client_id: app.id,
    token_type: row.token.kind === "access" ? "Bearer" : "refresh_token",
    exp: Math.floor(row.token.expiresAt.getTime() / 1000),
    iat: Math.floor(row.token.createdAt.getTime() / 1000),
    sub: row.grant.tenantId,
    iss: issuer,
  };
}

/** The REST facade's view of a bearer token: the partner caller, or undefined (invalid_token). */
export async function resolveAccessToken(db: Db, token: string, now: Date) {
  const [row] = await db
    .select({ token: oauthTokens, grant: oauthGrants })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(and(eq(oauthTokens.tokenHash, sha256(token)), eq(oauthTokens.kind, "access")));
  if (!row || row.token.revokedAt || row.grant.revokedAt || row.token.expiresAt <= now) return undefined;
  return { tenantId: row.grant.tenantId, appId: row.grant.appId, grantId: row.grant.id, scopes: row.token.scopes };
}
