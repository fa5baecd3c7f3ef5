import { and, eq, gt, isNull } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import type { Db } from "../../db/client";
import { oauthAuthorizationRequests, oauthCodes, partnerApps } from "../../db/schema";
import { recordAudit } from "../audit/record-audit";
import { env } from "../env";
import { OAuthError } from "./errors";
import { isScope, parseScope, scopeCatalog } from "./scopes";
import { codeLifetimeMs, newSecret, pendingRequestLifetimeMs, sha256 } from "./secrets";
import { isIllFormed } from "../text";

/** The fields of an authorize request, as the query string (GET) or the decision body carries them. */
export interface AuthorizeParams {
  client_id?: string | null;
  redirect_uri?: string | null;
  response_type?: string | null;
  scope?: string | null;
  state?: string | null;
  code_challenge?: string | null;
  code_challenge_method?: string | null;
}

export const authorizeFields = ["client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method"] as const;

export interface SignedInUser {
  userId: string;
  tenantId: string;
  /** For the consent's audit entry (the member's label). */
  email?: string;
}

const challengePattern = /^[A-Za-z0-9_-]{43}$/;

/**
 * Every check of the authorize request, in the order that keeps redirects safe: an unknown client
 * or a redirect URI that is not registered exactly is answered to the browser, never redirected.
 */
export async function validateAuthorizeRequest(db: Db, p: AuthorizeParams) {
  if (!p.client_id) throw new OAuthError("invalid_request", "client_id is required.");
  // A NUL is no client id (and PostgreSQL text cannot hold one): unknown, without asking the database.
  const [app] = isIllFormed(p.client_id) ? [] : await db.select().from(partnerApps).where(eq(partnerApps.id, p.client_id));
  if (!app) throw new OAuthError("invalid_client", "client_id: no partner app with this client_id.");
  if (!p.redirect_uri) throw new OAuthError("invalid_request", "redirect_uri is required.");
  if (!app.redirectUris.includes(p.redirect_uri)) {
    throw new OAuthError("invalid_request", "redirect_uri: does not match any redirect URI registered for the app (exact match).");
  }
  if (p.response_type !== "code") throw new OAuthError("unsupported_response_type", "response_type: must be code.");
  const scopes = parseScope(p.scope);
  if (scopes.length === 0) throw new OAuthError("invalid_scope", "scope: at least one scope is required.");
  const unapproved = scopes.filter((s) => !isScope(s) || !app.approvedScopes.includes(s));
  if (unapproved.length) throw new OAuthError("invalid_scope", `scope: not approved for this app: ${unapproved.join(" ")}.`);
  if (p.code_challenge_method && p.code_challenge_method !== "S256") {
    throw new OAuthError("invalid_request", "code_challenge_method: only S256 is supported.");
  }
  // PKCE (S256) from every client, confidential ones too (RFC 9700 §2.1.1): a client secret does not stop
  // an injected or stolen code from being redeemed by the client itself (docs/decisions.md#oauth).
  if (!p.code_challenge) throw new OAuthError("invalid_request", "code_challenge: PKCE (S256) is required from every app.");
  if (p.code_challenge_method !== "S256") throw new OAuthError("invalid_request", "code_challenge_method: S256 is required with code_challenge.");
  if (!challengePattern.test(p.code_challenge)) throw new OAuthError("invalid_request", "code_challenge: must be 43 base64url characters (S256).");
  return { app, scopes: scopes as (keyof typeof scopeCatalog)[] };
}

/** What the user is asked to approve is exactly these fields; the decision must repeat them. */
const fingerprint = (p: AuthorizeParams, scopes: string[]) =>
  sha256(JSON.stringify([p.client_id, p.redirect_uri, scopes.join(" "), p.state ?? "", p.code_challenge ?? "", p.code_challenge_method ?? ""]));

/** GET /api/oauth/authorize: validates, stores the pending request, answers the consent data. */
export async function prepareConsent(db: Db, user: SignedInUser, p: AuthorizeParams, now: Date) {
  const { app, scopes } = await validateAuthorizeRequest(db, p);
  await db.insert(oauthAuthorizationRequests).values({
    id: randomUUID(),
    appId: app.id,
    userId: user.userId,
    fingerprint: fingerprint(p, scopes),
    expiresAt: new Date(now.getTime() + pendingRequestLifetimeMs),
  });
  return {
    success: true as const,
    client: { client_id: app.id, name: app.name, logo_url: app.logoUrl, homepage_url: app.homepageUrl, privacy_url: app.privacyUrl },
    scopes: scopes.map((s) => ({ scope: s, description: scopeCatalog[s].description, sensitive: scopeCatalog[s].sensitive })),
    redirect_uri: p.redirect_uri!,
    state: p.state ?? null,
  };
}

/** The redirect back to the app, with `iss` (RFC 9207). */
function redirectTo(redirectUri: string, params: Record<string, string | null | undefined>) {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) url.searchParams.append(k, v);
  url.searchParams.append("iss", env.appUrl);
  return url.toString();
}

/**
 * POST /api/oauth/authorize/decision: re-validates, consumes the matching pending request of this
 * user, and answers where to send the browser: a 60-second single-use code, or access_denied.
 */
export async function decideAuthorization(db: Db, user: SignedInUser, p: AuthorizeParams, approve: boolean, now: Date, ip?: string) {
  const { app, scopes } = await validateAuthorizeRequest(db, p);
  const [pending] = await db
    .update(oauthAuthorizationRequests)
    .set({ consumedAt: now })
    .where(
      and(
        eq(oauthAuthorizationRequests.userId, user.userId),
        eq(oauthAuthorizationRequests.fingerprint, fingerprint(p, scopes)),
        isNull(oauthAuthorizationRequests.consumedAt),
        gt(oauthAuthorizationRequests.expiresAt, now),
      ),
    )
    .returning({ id: oauthAuthorizationRequests.id });
  if (!pending) {
    throw new OAuthError("invalid_request", "No pending authorization request matches this decision; open the consent page again.");
  }
  if (!approve) return redirectTo(p.redirect_uri!, { error: "access_denied", error_description: "The user denied access.", state: p.state });
  const code = newSecret("pac");
  await db.transaction(async (tx) => {
    await tx.insert(oauthCodes).values({
      codeHash: sha256(code),
      appId: app.id,
      tenantId: user.tenantId,
      userId: user.userId,
      redirectUri: p.redirect_uri!,
      scopes,
      codeChallenge: p.code_challenge!,
      expiresAt: new Date(now.getTime() + codeLifetimeMs),
    });
    const actor = { type: "member" as const, id: user.userId, label: user.email ?? null };
    await recordAudit(tx, { tenantId: user.tenantId, actor, action: "partner_app.consent", target: app.id, ip: ip ?? null, at: now });
  });
  return redirectTo(p.redirect_uri!, { code, state: p.state });
}
