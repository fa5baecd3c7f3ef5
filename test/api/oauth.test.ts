import { and, count, eq, isNotNull } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { deliveries, oauthCodes, users } from "../../db/schema";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { sha256 } from "../../server/oauth/secrets";
import { expectEnvelope, newTenant, request, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { approve, consentData, decide, registerApp, signedInUser, type EndUser } from "../oauth-client";

// Many OAuth calls from this one test address: the per-IP limit is tested in rate-limit.test.ts.
process.env.RATE_LIMIT_OAUTH_IP_PER_MINUTE = "100000";
// The dispatched campaign's failing group gives up at once (one immediate retry instead of 2 s and 10 s).
process.env.SEND_RETRY_SCHEDULE = "0";

const redirectUri = "http://127.0.0.1:8765/callback";
const insecure = { [oauth.allowInsecureRequests]: true } as const;

let server: TestServer;
let as: oauth.AuthorizationServer;
let user: EndUser;
let developerTenant: string;

beforeAll(async () => {
  server = await startTestServer();
  // The issuer (and next-auth's URL) is APP_URL: here, the test server.
  process.env.APP_URL = server.url;
  process.env.NEXTAUTH_URL = server.url;
  const issuer = new URL(server.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
  developerTenant = (await newTenant(server.url)).tenantId;
  user = await signedInUser(server.url);
});
afterAll(() => server.close());

/** A fresh PKCE pair and state, and the authorize fields a partner app would send. */
async function pkceRequest(clientId: string, scope = "statistics:read campaigns:read") {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const fields = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  };
  return { verifier, state, fields };
}

/** Authorize, approve, validate the callback (state and iss) and exchange the code. */
async function fullFlow(client: oauth.Client, auth: oauth.ClientAuth, scope?: string, endUser: EndUser = user) {
  const { verifier, state, fields } = await pkceRequest(client.client_id, scope);
  const landed = await approve(server.url, endUser, fields);
  const params = oauth.validateAuthResponse(as, client, landed, state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, insecure);
  return { tokens: await oauth.processAuthorizationCodeResponse(as, client, res), params, verifier };
}

const bearer = (token: string, path: string) => request(server.url, "GET", path, undefined, { authorization: `Bearer ${token}` });

/** The RFC 6749 error of a token-endpoint call, asserting oauth4webapi refuses it. */
async function oauthError(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "expected the authorization server to refuse").toBeInstanceOf(oauth.ResponseBodyError);
  return (err as oauth.ResponseBodyError).error;
}

const tokenCall = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form),
  });

describe("discovery (RFC 8414)", () => {
  it("publishes the issuer, the endpoints, S256 only and iss on redirects", () => {
    expect(as.issuer).toBe(server.url);
    expect(as.authorization_endpoint).toBe(`${server.url}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${server.url}/api/oauth/token`);
    expect(as.revocation_endpoint).toBe(`${server.url}/api/oauth/revoke`);
    expect(as.introspection_endpoint).toBe(`${server.url}/api/oauth/introspect`);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect(as.scopes_supported).toEqual(["statistics:read", "campaigns:read", "settings:read"]);
  });
});

describe("the Authorization Code flow, as a partner's developer drives it", () => {
  it("confidential app: consent data, PKCE, code exchange (client_secret_basic), partner endpoints, rotation, revocation", async () => {
    const { app, client_secret } = await registerApp(developerTenant);
    expect(app.client_id).toMatch(/^client_/);
    expect(client_secret).toMatch(/^pcs_[A-Za-z0-9_-]{43}$/);
    expect(app.approved_scopes).toEqual(["statistics:read", "campaigns:read"]);
    const client: oauth.Client = { client_id: app.client_id };

    // The consent data the dashboard shows.
    const { fields } = await pkceRequest(app.client_id);
    const consent = await consentData(server.url, user, fields);
    expect(consent.status).toBe(200);
    expect(consent.headers.get("cache-control")).toBe("no-store");
    expect(await consent.json()).toEqual({
      success: true,
      client: {
        client_id: app.client_id,
        name: "Painel Parceiro",
        logo_url: "https://parceiro.example.com/logo.png",
        homepage_url: "https://parceiro.example.com",
        privacy_url: "https://parceiro.example.com/privacidade",
      },
      scopes: [
        { scope: "statistics:read", description: expect.stringContaining("estatísticas"), sensitive: false },
        { scope: "campaigns:read", description: expect.stringContaining("campanhas"), sensitive: true },
      ],
      redirect_uri: redirectUri,
      state: fields.state,
    });

    const { tokens } = await fullFlow(client, oauth.ClientSecretBasic(client_secret!));
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("statistics:read campaigns:read");
    expect(tokens.access_token).toMatch(/^pat_[A-Za-z0-9_-]{43}$/);

    const stats = await bearer(tokens.access_token, "/api/external/partner/statistics");
    expect(stats.status).toBe(200);
    expect(stats.json).toEqual({
      success: true,
      period_days: 30,
      statistics: { campaigns: 0, total_reads: 0, messages_total: 0, messages_sent: 0, messages_failed: 0 },
    });
    expect(stats.headers.get("ratelimit-limit")).toBe("120");

    // Refresh rotates (client_secret_post this time).
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretPost(client_secret!), tokens.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await bearer(refreshed.access_token, "/api/external/partner/campaigns")).status).toBe(200);

    // Introspection (RFC 7662) sees it active, then revocation (RFC 7009) of the refresh token ends the grant.
    const intro = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(client_secret!), refreshed.access_token, insecure),
    );
    expect(intro).toMatchObject({ active: true, client_id: app.client_id, scope: "statistics:read campaigns:read", token_type: "Bearer" });
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.ClientSecretBasic(client_secret!), refreshed.refresh_token!, insecure),
    );
    const after = await bearer(refreshed.access_token, "/api/external/partner/statistics");
    expect(expectEnvelope(after, 401, "Unauthorized").code).toBe("invalid_token");
    expect(after.headers.get("www-authenticate")).toBe('Bearer realm="partner", error="invalid_token"');
    const gone = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(client_secret!), refreshed.access_token, insecure),
    );
    expect(gone.active).toBe(false);
  });

  it("public app: PKCE only, no secret; refresh and revocation of the access token", async () => {
    const { app, client_secret } = await registerApp(developerTenant, { client_type: "public", scopes: ["statistics:read"] });
    expect(client_secret).toBeNull();
    const client: oauth.Client = { client_id: app.client_id, token_endpoint_auth_method: "none" };
    const { tokens } = await fullFlow(client, oauth.None(), "statistics:read");
    expect((await bearer(tokens.access_token, "/api/external/partner/statistics")).status).toBe(200);
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.access_token, insecure));
    expect((await bearer(refreshed.access_token, "/api/external/partner/statistics")).status).toBe(401);
    // Revoking the access token alone leaves the refresh token working.
    await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure));
  });

  it("the dashboard lists the authorized app, and revoking access kills its tokens", async () => {
    const { app, client_secret } = await registerApp(developerTenant, { name: "App Revogável" });
    const { tokens } = await fullFlow({ client_id: app.client_id }, oauth.ClientSecretBasic(client_secret!));
    const { developerPortal } = await import("../oauth-client");
    const portal = await developerPortal(user.tenantId);
    expect((await portal.authorized()).map((a) => a.name)).toContain("App Revogável");
    expect(await portal.revokeAccess({ client_id: app.client_id })).toEqual({ success: true, revoked_grants: 1 });
    expect((await portal.authorized()).map((a) => a.name)).not.toContain("App Revogável");
    expect((await bearer(tokens.access_token, "/api/external/partner/statistics")).status).toBe(401);
    const reuse = await tokenCall({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: app.client_id,
      client_secret: client_secret!,
    });
    expect(((await reuse.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a denial lands on the redirect URI with access_denied, state and iss", async () => {
    const { app } = await registerApp(developerTenant);
    const { fields, state } = await pkceRequest(app.client_id);
    await consentData(server.url, user, fields);
    const res = await decide(server.url, user, fields, false);
    expect(res.status).toBe(303);
    const landed = new URL(res.headers.get("location")!);
    expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri);
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("state")).toBe(state);
    expect(landed.searchParams.get("iss")).toBe(server.url);
    expect(() => oauth.validateAuthResponse(as, { client_id: app.client_id }, landed, state)).toThrow(oauth.AuthorizationResponseError);
  });

  it("partner endpoints: 20 campaigns a page with four fields only; statistics count the tenant's campaigns and deliveries", async () => {
    const owner = await signedInUser(server.url);
    const api = (method: string, path: string, body?: unknown) => request(server.url, method, path, body, { "x-api-key": owner.apiKey });
    const channel = (await api("POST", "/api/external/create-channel", { name: "Canal" })).json.id_channel;
    const groups = (await api("GET", `/api/external/list-groups/${channel}`)).json.groups.slice(0, 3).map((g: { id_group: string }) => g.id_group);
    const segment = (await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups })).json.id_segment;
    for (let i = 0; i < 21; i++) {
      const c = await api("POST", "/api/external/create-campaign/message", {
        name: `Campanha ${i}`,
        id_segment: segment,
        message: "Olá",
        scheduled_at: "25/12/2099 - 10:00",
      });
      expect(c.status).toBe(201);
    }
    const { app, client_secret } = await registerApp(developerTenant);
    const { tokens } = await fullFlow({ client_id: app.client_id }, oauth.ClientSecretPost(client_secret!), undefined, owner);
    const page1 = await bearer(tokens.access_token, "/api/external/partner/campaigns");
    expect(page1.json).toMatchObject({ success: true, total: 21, page: 1, per_page: 20, pages: 2 });
    expect(page1.json.campaigns).toHaveLength(20);
    expect(Object.keys(page1.json.campaigns[0]).sort()).toEqual(["created_at", "id_campaign", "name", "status"]);
    const page2 = await bearer(tokens.access_token, "/api/external/partner/campaigns?page=2");
    expect(page2.json.campaigns).toHaveLength(1);
    expect(page2.json.campaigns[0]).toMatchObject({ name: "Campanha 0", status: "pending" });
    expectEnvelope(await bearer(tokens.access_token, "/api/external/partner/campaigns?page=0"), 400, "Bad Request");

    const stats = await bearer(tokens.access_token, "/api/external/partner/statistics?days=7");
    expect(stats.json).toEqual({
      success: true,
      period_days: 7,
      statistics: { campaigns: 21, total_reads: 0, messages_total: 63, messages_sent: 0, messages_failed: 0 },
    });
    expect(stats.text).not.toContain(channel);
    expect(stats.text).not.toContain("@g.us");
    for (const days of ["0", "366", "abc"]) {
      expect((await bearer(tokens.access_token, `/api/external/partner/statistics?days=${days}`)).json.period_days).toBe(30);
    }
  });

  it("partner statistics count a dispatched campaign: sent and failed deliveries and the read receipts that arrived", async () => {
    const owner = await signedInUser(server.url);
    const api = (method: string, path: string, body?: unknown) => request(server.url, method, path, body, { "x-api-key": owner.apiKey });
    const runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
    try {
      await api("PATCH", "/api/external/edit-settings", zeroPacing);
      const channel = (await api("POST", "/api/external/create-channel", { name: "Canal" })).json.id_channel;
      const groups = (await api("GET", `/api/external/list-groups/${channel}`)).json.groups.map((g: { id_group: string }) => g.id_group);
      // 19 groups, and the 20th as the monitoring group: its copy is not one of the campaign's groups.
      const segment = (await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups: groups.slice(0, 19) })).json.id_segment;
      expect((await api("POST", "/api/external/monitoring/group", { id_segment: segment, id_channel: channel, id_group: groups[19] })).status).toBe(201);
      expect((await api("POST", `/api/simulator/groups/${groups[0]}/failures`, { always: true })).status).toBe(200);
      const campaign = (await api("POST", "/api/external/create-campaign/message", { name: "Enviada", id_segment: segment, message: "Olá" })).json.id_campaign;

      const { app, client_secret } = await registerApp(developerTenant);
      const { tokens } = await fullFlow({ client_id: app.client_id }, oauth.ClientSecretPost(client_secret!), undefined, owner);

      const db = await getDb();
      const deadline = Date.now() + 30_000;
      let stats: Record<string, number> = {};
      let reads = -1;
      // Done once the campaign completed and the buffered read receipts are all recorded.
      while (Date.now() < deadline) {
        const info = (await api("GET", `/api/external/info-campaign/${campaign}`)).json;
        const [row] = await db
          .select({ n: count() })
          .from(deliveries)
          .where(and(eq(deliveries.campaignId, campaign), eq(deliveries.isMonitoring, false), isNotNull(deliveries.readAt)));
        reads = row.n;
        stats = (await bearer(tokens.access_token, "/api/external/partner/statistics?days=1")).json.statistics;
        if (info.status === "completed" && info.monitoring_group?.status === "sent" && stats.total_reads === reads && reads > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(stats).toEqual({ campaigns: 1, total_reads: reads, messages_total: 19, messages_sent: 18, messages_failed: 1 });
      expect(reads).toBeGreaterThan(0);
      expect(reads).toBeLessThan(18);
    } finally {
      await runner.stop();
    }
  });
});

describe("attacks, each refused", () => {
  let confidential: { client_id: string; secret: string };
  let publicApp: string;

  beforeAll(async () => {
    const c = await registerApp(developerTenant, { scopes: ["statistics:read", "campaigns:read", "settings:read"] });
    confidential = { client_id: c.app.client_id, secret: c.client_secret! };
    // settings:read is not auto-approved: it waits for the operator.
    expect(c.app.approved_scopes).toEqual(["statistics:read", "campaigns:read"]);
    publicApp = (await registerApp(developerTenant, { client_type: "public" })).app.client_id;
  });

  const basic = () => oauth.ClientSecretBasic(confidential.secret);

  it("code replay: refused, and the tokens issued from the code are revoked", async () => {
    const client = { client_id: confidential.client_id };
    const { tokens, params, verifier } = await fullFlow(client, basic());
    expect((await bearer(tokens.access_token, "/api/external/partner/statistics")).status).toBe(200);
    const replay = oauth.authorizationCodeGrantRequest(as, client, basic(), params, redirectUri, verifier, insecure);
    expect(await oauthError(replay.then((r) => oauth.processAuthorizationCodeResponse(as, client, r)))).toBe("invalid_grant");
    expect((await bearer(tokens.access_token, "/api/external/partner/statistics")).status).toBe(401);
    const refresh = oauth.refreshTokenGrantRequest(as, client, basic(), tokens.refresh_token!, insecure);
    expect(await oauthError(refresh.then((r) => oauth.processRefreshTokenResponse(as, client, r)))).toBe("invalid_grant");
  });

  it("wrong verifier, and a missing one, are invalid_grant", async () => {
    const client = { client_id: confidential.client_id };
    for (const verifier of [oauth.generateRandomCodeVerifier(), undefined]) {
      const { state, fields } = await pkceRequest(confidential.client_id);
      const params = oauth.validateAuthResponse(as, client, await approve(server.url, user, fields), state);
      const res = verifier
        ? await oauth.authorizationCodeGrantRequest(as, client, basic(), params, redirectUri, verifier, insecure)
        : await tokenCall(
            { grant_type: "authorization_code", code: params.get("code")!, redirect_uri: redirectUri },
            { authorization: `Basic ${Buffer.from(`${confidential.client_id}:${confidential.secret}`).toString("base64")}` },
          );
      expect(res.status).toBe(400);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    }
  });

  it("a confidential app must use PKCE too (S256): authorize and decision without code_challenge are 400, a code without one is 400 at the token endpoint", async () => {
    const { fields } = await pkceRequest(confidential.client_id);
    const noPkce = { ...fields, code_challenge: undefined, code_challenge_method: undefined };
    const consent = await consentData(server.url, user, noPkce);
    expect(consent.status).toBe(400);
    expect(await consent.json()).toMatchObject({ success: false, error: "invalid_request", message: expect.stringMatching(/^code_challenge: .*S256/) });
    const decision = await decide(server.url, user, noPkce, true);
    expect(decision.status).toBe(400);
    expect(decision.headers.get("location")).toBeNull();

    // A code stored without a challenge (issued before PKCE was required of every client) is refused, and burned.
    const db = await getDb();
    const [owner] = await db.select({ id: users.id }).from(users).where(eq(users.email, user.email));
    const code = `pac_${"k".repeat(43)}`;
    await db.insert(oauthCodes).values({
      codeHash: sha256(code),
      appId: confidential.client_id,
      tenantId: user.tenantId,
      userId: owner.id,
      redirectUri,
      scopes: ["statistics:read"],
      codeChallenge: null,
      expiresAt: new Date(Date.now() + 60_000),
    });
    const res = await tokenCall(
      { grant_type: "authorization_code", code, redirect_uri: redirectUri },
      { authorization: `Basic ${Buffer.from(`${confidential.client_id}:${confidential.secret}`).toString("base64")}` },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant", error_description: expect.stringContaining("PKCE") });
    const [row] = await db
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256(code)));
    expect(row.usedAt).not.toBeNull();
    expect(row.grantId).toBeNull();
  });

  it("a public app must use PKCE, and S256 only (plain refused)", async () => {
    const { fields } = await pkceRequest(publicApp);
    const missing = await consentData(server.url, user, { ...fields, code_challenge: undefined, code_challenge_method: undefined });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ success: false, error: "invalid_request", message: expect.stringContaining("PKCE") });
    const verifier = oauth.generateRandomCodeVerifier();
    const plain = await consentData(server.url, user, { ...fields, code_challenge: verifier, code_challenge_method: "plain" });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ success: false, error: "invalid_request", message: expect.stringContaining("S256") });
    // A challenge without its method is plain by default (RFC 7636 §4.3): refused too.
    expect((await consentData(server.url, user, { ...fields, code_challenge_method: undefined })).status).toBe(400);
  });

  it("redirect URI mismatch, or an unknown client: JSON 400, never a redirect", async () => {
    const { fields } = await pkceRequest(confidential.client_id);
    for (const bad of [
      { redirect_uri: "http://127.0.0.1:8765/callback/../evil" },
      { redirect_uri: "https://evil.example.com/callback" },
      { redirect_uri: `${redirectUri}?x=1` },
      { client_id: "client_nope" },
    ]) {
      const res = await consentData(server.url, user, { ...fields, ...bad });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect((await res.json()).success).toBe(false);
      const decision = await decide(server.url, user, { ...fields, ...bad }, true);
      expect(decision.status).toBe(400);
      expect(decision.headers.get("location")).toBeNull();
    }
  });

  it("scope escalation on authorize (unapproved or unknown scopes named) and on refresh", async () => {
    const { fields } = await pkceRequest(confidential.client_id);
    const res = await consentData(server.url, user, { ...fields, scope: "statistics:read settings:read admin:write" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, error: "invalid_scope", message: "scope: not approved for this app: settings:read admin:write." });

    const client = { client_id: confidential.client_id };
    const { tokens } = await fullFlow(client, basic(), "statistics:read");
    const wider = oauth.refreshTokenGrantRequest(as, client, basic(), tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { scope: "statistics:read campaigns:read" },
    });
    expect(await oauthError(wider.then((r) => oauth.processRefreshTokenResponse(as, client, r)))).toBe("invalid_scope");
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, basic(), tokens.refresh_token!, { ...insecure, additionalParameters: { scope: "statistics:read" } }),
    );
    expect(narrowed.scope).toBe("statistics:read");
    // The token lacks campaigns:read: 403 insufficient_scope.
    const forbidden = await bearer(narrowed.access_token, "/api/external/partner/campaigns");
    expect(expectEnvelope(forbidden, 403, "Forbidden").code).toBe("insufficient_scope");
    expect(forbidden.headers.get("www-authenticate")).toBe('Bearer realm="partner", error="insufficient_scope"');
  });

  it("refresh token reuse revokes the whole family", async () => {
    const client = { client_id: confidential.client_id };
    const { tokens } = await fullFlow(client, basic());
    const rotated = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, basic(), tokens.refresh_token!, insecure),
    );
    const reuse = oauth.refreshTokenGrantRequest(as, client, basic(), tokens.refresh_token!, insecure);
    expect(await oauthError(reuse.then((r) => oauth.processRefreshTokenResponse(as, client, r)))).toBe("invalid_grant");
    expect((await bearer(rotated.access_token, "/api/external/partner/statistics")).status).toBe(401);
    const next = oauth.refreshTokenGrantRequest(as, client, basic(), rotated.refresh_token!, insecure);
    expect(await oauthError(next.then((r) => oauth.processRefreshTokenResponse(as, client, r)))).toBe("invalid_grant");
  });

  it("another client's code, and a code past its 60 seconds, are invalid_grant", async () => {
    const other = await registerApp(developerTenant);
    const otherClient = { client_id: other.app.client_id };
    const { verifier, state, fields } = await pkceRequest(confidential.client_id);
    const params = oauth.validateAuthResponse(as, { client_id: confidential.client_id }, await approve(server.url, user, fields), state);
    const stolen = oauth.authorizationCodeGrantRequest(as, otherClient, oauth.ClientSecretBasic(other.client_secret!), params, redirectUri, verifier, insecure);
    expect(await oauthError(stolen.then((r) => oauth.processAuthorizationCodeResponse(as, otherClient, r)))).toBe("invalid_grant");
    // A wrong secret for the right client is invalid_client (401).
    const wrongSecret = await tokenCall(
      { grant_type: "authorization_code", code: params.get("code")!, redirect_uri: redirectUri, code_verifier: verifier },
      { authorization: `Basic ${Buffer.from(`${confidential.client_id}:pcs_wrong`).toString("base64")}` },
    );
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.headers.get("www-authenticate")).toBe('Basic realm="oauth"');
    expect(((await wrongSecret.json()) as { error: string }).error).toBe("invalid_client");

    // Age the code past its lifetime, then present it: expired.
    const db = await getDb();
    await db
      .update(oauthCodes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthCodes.codeHash, sha256(params.get("code")!)));
    const client = { client_id: confidential.client_id };
    const expired = oauth.authorizationCodeGrantRequest(as, client, basic(), params, redirectUri, verifier, insecure);
    expect(await oauthError(expired.then((r) => oauth.processAuthorizationCodeResponse(as, client, r)))).toBe("invalid_grant");
  });

  it("a cross-origin decision POST is refused, and so is a decision nobody was shown", async () => {
    const { fields } = await pkceRequest(confidential.client_id);
    await consentData(server.url, user, fields);
    for (const headers of [{ origin: "https://evil.example.com" }, { "sec-fetch-site": "cross-site" }, {} as Record<string, string>]) {
      const res = await decide(server.url, user, fields, true, headers);
      expect(res.status).toBe(403);
      expect(res.headers.get("location")).toBeNull();
    }
    // Same origin but never shown on the consent page (another state): no pending request matches.
    const unseen = await decide(server.url, user, { ...fields, state: "forged" }, true);
    expect(unseen.status).toBe(400);
    expect(unseen.headers.get("location")).toBeNull();
    // Without a session: 401, for the consent data and the decision alike.
    const anonymous = { ...user, cookie: "" };
    expect((await consentData(server.url, anonymous, fields)).status).toBe(401);
    expect((await decide(server.url, anonymous, fields, true)).status).toBe(401);
  });

  it("a partner token gets 401 on owner endpoints (403 on test-webhook); an API key gets 401 on partner endpoints", async () => {
    const { tokens } = await fullFlow({ client_id: confidential.client_id }, basic());
    for (const [method, path] of [
      ["GET", "/api/external/list-settings"],
      ["POST", "/api/external/create-channel"],
      ["GET", "/api/external/list-webhooks"],
    ]) {
      const res = await request(server.url, method, path, method === "POST" ? { name: "x" } : undefined, { authorization: `Bearer ${tokens.access_token}` });
      expectEnvelope(res, 401, "Unauthorized");
    }
    // test-webhook: the spec answers a partner token 403.
    const test = await request(server.url, "POST", "/api/external/test-webhook/campaign_status", {}, { authorization: `Bearer ${tokens.access_token}` });
    expectEnvelope(test, 403, "Forbidden");
    const withKey = await request(server.url, "GET", "/api/external/partner/statistics", undefined, { "x-api-key": user.apiKey });
    expect(expectEnvelope(withKey, 401, "Unauthorized").code).toBe("invalid_token");
    const none = await request(server.url, "GET", "/api/external/partner/statistics");
    expectEnvelope(none, 401, "Unauthorized");
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="partner"');
  });

  it("registration refuses http redirect URIs outside loopback", async () => {
    await expect(registerApp(developerTenant, { redirect_uris: ["http://parceiro.example.com/cb"] })).rejects.toThrow(/https/);
    await expect(registerApp(developerTenant, { redirect_uris: ["https://parceiro.example.com/cb#frag"] })).rejects.toThrow(/fragment/);
  });
});
