/**
 * What a partner's developer and a signed-in end user do, over HTTP: sign in through next-auth as a
 * script would, open the consent data, post the decision. Used by the OAuth tests.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createTenant } from "../server/auth/create-tenant";
import { getDb } from "../db/client";
import { createCallerFactory } from "../server/trpc";
import { appRouter } from "../server/root";
import { getServices } from "../server/services";
import type { RegisterAppInput } from "../server/oauth/schema";

export interface EndUser {
  tenantId: string;
  apiKey: string;
  email: string;
  /** Cookie header of the dashboard session. */
  cookie: string;
}

const cookieJar = (setCookies: string[], jar: Map<string, string>) => {
  for (const c of setCookies) {
    const [pair] = c.split(";");
    const eq = pair.indexOf("=");
    jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
};

/** GET /api/auth/csrf, then POST /api/auth/callback/credentials: the documented script sign-in. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  let cookie = cookieJar(csrf.headers.getSetCookie(), jar);
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  cookie = cookieJar(res.headers.getSetCookie(), jar);
  if (!cookie.includes("next-auth.session-token")) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return cookie;
}

/** A tenant whose owner is signed in to the dashboard. */
export async function signedInUser(baseUrl: string): Promise<EndUser> {
  const email = `u-${randomUUID()}@example.test`;
  const password = "senha-segura-123";
  const { tenantId, apiKey } = await createTenant(await getDb(), { name: "Loja do Usuário", email, password });
  return { tenantId, apiKey, email, cookie: await signIn(baseUrl, email, password) };
}

/** The developer portal's tRPC procedures, as the dashboard calls them for a signed-in developer. */
export async function developerPortal(tenantId: string) {
  const { db, provider } = await getServices();
  return createCallerFactory(appRouter)({ db, provider, caller: { kind: "session", tenantId, userId: "user_dev", role: "owner" }, now: new Date() })
    .partnerApps;
}

export async function registerApp(tenantId: string, overrides: Partial<RegisterAppInput> = {}) {
  const portal = await developerPortal(tenantId);
  return portal.register({
    name: "Painel Parceiro",
    logo_url: "https://parceiro.example.com/logo.png",
    homepage_url: "https://parceiro.example.com",
    privacy_url: "https://parceiro.example.com/privacidade",
    redirect_uris: ["http://127.0.0.1:8765/callback"],
    scopes: ["statistics:read", "campaigns:read"],
    client_type: "confidential",
    ...overrides,
  });
}

export type AuthorizeFields = Record<string, string | undefined>;

const query = (fields: AuthorizeFields) => new URLSearchParams(Object.entries(fields).filter(([, v]) => v !== undefined) as [string, string][]);

/** GET /api/oauth/authorize with the session cookie: the consent data (or the error). */
export const consentData = (baseUrl: string, user: EndUser, fields: AuthorizeFields) =>
  fetch(`${baseUrl}/api/oauth/authorize?${query(fields)}`, { headers: { cookie: user.cookie } });

/** POST /api/oauth/authorize/decision as the consent page's form posts it (same origin). */
export const decide = (baseUrl: string, user: EndUser, fields: AuthorizeFields, approve: boolean, headers: Record<string, string> = { origin: baseUrl }) =>
  fetch(`${baseUrl}/api/oauth/authorize/decision`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: user.cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: query({ ...fields, response_type: undefined, approve: String(approve) }),
  });

/** Consent shown, then approved: the URL the browser lands on (redirect_uri?code=…&state=…&iss=…). */
export async function approve(baseUrl: string, user: EndUser, fields: AuthorizeFields): Promise<URL> {
  const consent = await consentData(baseUrl, user, fields);
  if (consent.status !== 200) throw new Error(`consent ${consent.status}: ${await consent.text()}`);
  const res = await decide(baseUrl, user, fields, true);
  if (res.status !== 303) throw new Error(`decision ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get("location")!);
}

/** PKCE S256 pair for a script (no oauth4webapi needed where the flow itself is not under test). */
function pkcePair() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The whole flow for a confidential app: the user approves `scope`, the code is exchanged; the token response. */
export async function authorizeApp(baseUrl: string, user: EndUser, app: { client_id: string; client_secret: string; redirect_uri: string }, scope: string) {
  const { verifier, challenge } = pkcePair();
  const fields = {
    client_id: app.client_id,
    redirect_uri: app.redirect_uri,
    response_type: "code",
    scope,
    state: "s",
    code_challenge: challenge,
    code_challenge_method: "S256",
  };
  const landed = await approve(baseUrl, user, fields);
  const res = await fetch(`${baseUrl}/api/oauth/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString("base64")}`,
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: landed.searchParams.get("code")!,
      redirect_uri: app.redirect_uri,
      code_verifier: verifier,
    }),
  });
  if (res.status !== 200) throw new Error(`token ${res.status}: ${await res.text()}`);
  return (await res.json()) as { access_token: string; refresh_token: string; scope: string };
}
