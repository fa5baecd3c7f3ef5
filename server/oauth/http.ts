import { requestSession } from "../auth/session";
import { roleAtLeast } from "../members/roles";
import { getServices } from "../services";
import { env } from "../env";
import { PayloadTooLarge, payloadTooLargeResponse, readCappedText } from "../http/body-limit";
import { clientIp } from "../http/client-address";
import { sameOrigin } from "../http/same-origin";
import { consume, peek } from "../http/rate-limit";
import { authorizeFields, decideAuthorization, prepareConsent, type AuthorizeParams } from "./authorize";
import { authenticateClient } from "./client-auth";
import { isOAuthError, OAuthError } from "./errors";
import { authorizationServerMetadata } from "./metadata";
import { exchangeCode, introspectToken, refreshTokens, revokeToken } from "./tokens";

/**
 * The OAuth endpoints as plain Request → Response functions: app/api/oauth/* route handlers call
 * them, and so does the test server. Every answer is `Cache-Control: no-store` (RFC 6749 §5.1).
 */
const noStore = { "cache-control": "no-store", pragma: "no-cache" };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...noStore, ...headers } });

/** Authorize and decision speak the spec's shape: {success:false, error:<oauth code>, message}. */
const consentError = (e: OAuthError, headers: Record<string, string> = {}) =>
  json(e.status, { success: false, error: e.error, message: e.description }, headers);

/** Token, revoke and introspect speak RFC 6749 §5.2: {error, error_description}. */
const tokenError = (e: OAuthError, usedBasic = false) =>
  json(e.status, { error: e.error, error_description: e.description }, e.status === 401 && usedBasic ? { "www-authenticate": 'Basic realm="oauth"' } : {});

type Handler = (req: Request, ctx: { now: Date; headers: Record<string, string> }) => Promise<Response>;

/** Per-IP limit of the OAuth endpoints; unexpected failures become a bare 500. */
function withOAuthLimits(handler: Handler, shape: "consent" | "token"): (req: Request) => Promise<Response> {
  return async (req) => {
    try {
      const { db } = await getServices();
      const ip = clientIp(req.headers);
      const limit = await consume(db, "oauthIp", ip);
      const blocked = limit.allowed ? await peek(db, "failedAuth", ip) : limit;
      if (!blocked.allowed) {
        const body = { error: "rate_limited", message: "Too many requests from this address; retry after the time in Retry-After." };
        return json(429, shape === "consent" ? { success: false, ...body, code: "rate_limited" } : { ...body, error_description: body.message }, {
          ...limit.headers,
          ...blocked.headers,
        });
      }
      return await handler(req, { now: new Date(), headers: limit.headers });
    } catch (err) {
      if (err instanceof PayloadTooLarge) return payloadTooLargeResponse(err.cap);
      console.error("[oauth] request failed", err);
      return json(500, shape === "consent" ? { success: false, error: "server_error", message: "Internal server error" } : { error: "server_error" });
    }
  };
}

const paramsFrom = (get: (k: string) => string | null | undefined): AuthorizeParams =>
  Object.fromEntries(authorizeFields.map((k) => [k, get(k) ?? null])) as AuthorizeParams;

const loginRequired = () => consentError(new OAuthError("login_required", "Sign in to the dashboard first (session cookie).", 401));

/** GET /api/oauth/authorize: the consent data for the signed-in user. */
export const handleAuthorize = withOAuthLimits(async (req, { now, headers }) => {
  const { db } = await getServices();
  const user = await requestSession(db, req);
  if (!user) return loginRequired();
  const url = new URL(req.url);
  try {
    return json(
      200,
      await prepareConsent(
        db,
        user,
        paramsFrom((k) => url.searchParams.get(k)),
        now,
      ),
      headers,
    );
  } catch (e) {
    if (isOAuthError(e)) return consentError(e, headers);
    throw e;
  }
}, "consent");

async function readFields(req: Request): Promise<Record<string, string> | undefined> {
  const type = req.headers.get("content-type") ?? "";
  const text = await readCappedText(req);
  if (type.includes("application/json")) {
    try {
      const body = JSON.parse(text) as Record<string, unknown>;
      if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
      return Object.fromEntries(
        Object.entries(body)
          .filter(([, v]) => v !== null && v !== undefined)
          .map(([k, v]) => [k, String(v)]),
      );
    } catch {
      return undefined;
    }
  }
  if (type.includes("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  return undefined;
}

/** POST /api/oauth/authorize/decision: 303 back to the app with a code (or access_denied). */
export const handleDecision = withOAuthLimits(async (req, { now }) => {
  const { db } = await getServices();
  const user = await requestSession(db, req);
  if (!user) return loginRequired();
  // Same origin only (server/http/same-origin.ts): another site cannot make a signed-in user approve. A form
  // is accepted beside JSON (the consent page posts one, so the browser follows the 303 to the app).
  if (!sameOrigin(req)) return consentError(new OAuthError("invalid_request", "Cross-origin decision refused.", 403));
  const fields = await readFields(req);
  if (!fields) return consentError(new OAuthError("invalid_request", "The body must be JSON or a form (application/x-www-form-urlencoded)."));
  if (fields.approve !== "true" && fields.approve !== "false") return consentError(new OAuthError("invalid_request", "approve: must be true or false."));
  // Granting an app access to the account is an admin's (docs/team.md#roles); anyone may decline.
  if (fields.approve === "true" && !roleAtLeast(user.role, "admin")) {
    return consentError(new OAuthError("access_denied", "Authorizing an app needs the role admin or above in this account.", 403));
  }
  try {
    // The decision carries the authorize fields; response_type is implied by the endpoint.
    const params = { ...paramsFrom((k) => fields[k]), response_type: "code" };
    const location = await decideAuthorization(db, user, params, fields.approve === "true", now, clientIp(req.headers));
    return new Response(null, { status: 303, headers: { location, ...noStore } });
  } catch (e) {
    if (isOAuthError(e)) return consentError(e);
    throw e;
  }
}, "consent");

async function readForm(req: Request): Promise<URLSearchParams> {
  if (!(req.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded")) {
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  return new URLSearchParams(await readCappedText(req));
}

/**
 * Token-style endpoints: form body, client authentication, RFC 6749 errors; a failed client authentication
 * counts as a failed authentication of the address.
 */
function clientEndpoint(
  run: (args: { req: Request; form: URLSearchParams; app: Awaited<ReturnType<typeof authenticateClient>>["app"]; now: Date }) => Promise<Response>,
) {
  return withOAuthLimits(async (req, { now }) => {
    const { db } = await getServices();
    let usedBasic = false;
    try {
      const form = await readForm(req);
      const client = await authenticateClient(db, req.headers, form).catch(async (e) => {
        if (isOAuthError(e) && e.status === 401) await consume(db, "failedAuth", clientIp(req.headers));
        throw e;
      });
      usedBasic = client.usedBasic;
      return await run({ req, form, app: client.app, now });
    } catch (e) {
      if (isOAuthError(e)) return tokenError(e, usedBasic || /^Basic /i.test(req.headers.get("authorization") ?? ""));
      throw e;
    }
  }, "token");
}

/** POST /api/oauth/token: authorization_code and refresh_token grants. */
export const handleToken = clientEndpoint(async ({ req, form, app, now }) => {
  const { db } = await getServices();
  const grantType = form.get("grant_type");
  if (grantType === "authorization_code") return json(200, await exchangeCode(db, app, form, now, clientIp(req.headers)));
  if (grantType === "refresh_token") return json(200, await refreshTokens(db, app, form, now));
  throw new OAuthError("unsupported_grant_type", "grant_type: must be authorization_code or refresh_token.");
});

/** POST /api/oauth/revoke (RFC 7009): 200 whatever the token was. */
export const handleRevoke = clientEndpoint(async ({ req, form, app, now }) => {
  const { db } = await getServices();
  const token = form.get("token");
  if (!token) throw new OAuthError("invalid_request", "token is required.");
  await revokeToken(db, app, token, now, clientIp(req.headers));
  return new Response(null, { status: 200, headers: noStore });
});

/** POST /api/oauth/introspect (RFC 7662): confidential clients, their own tokens only. */
export const handleIntrospect = clientEndpoint(async ({ form, app, now }) => {
  const { db } = await getServices();
  if (app.clientType !== "confidential") throw new OAuthError("invalid_client", "Introspection needs a confidential client's credentials.", 401);
  const token = form.get("token");
  if (!token) throw new OAuthError("invalid_request", "token is required.");
  return json(200, await introspectToken(db, app, token, now, env.appUrl));
});

/** GET /.well-known/oauth-authorization-server (RFC 8414). */
export const handleMetadata = async () =>
  new Response(JSON.stringify(authorizationServerMetadata()), {
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=300" },
  });
