import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { webhookConfigs } from "../../db/schema";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant, request } from "../helpers";
import { withServerAndReceiver } from "../webhooks/fixtures";
import { webhookHeadersOf } from "../webhooks/receiver";

const fx = withServerAndReceiver();
afterEach(() => {
  process.env.WEBHOOK_ALLOW_PRIVATE = "1";
});

const LIST = "/api/external/list-webhooks";
const EDIT = "/api/external/edit-webhooks";
const TEST = (type: string) => `/api/external/test-webhook/${type}`;

describe("list-webhooks", () => {
  it("answers the four URLs (null when disabled) and a whsec_ signing secret that stays the same", async () => {
    const api = await newTenant(fx.server.url);
    const res = await api("GET", LIST);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      webhooks: {
        campaign_status_url: null,
        campaign_progress_url: null,
        channel_status_url: null,
        group_activity_url: null,
        signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      },
    });
    expect((await api("GET", LIST)).json.webhooks.signing_secret).toBe(res.json.webhooks.signing_secret);
    // Another tenant has its own secret.
    const other = await newTenant(fx.server.url);
    expect((await other("GET", LIST)).json.webhooks.signing_secret).not.toBe(res.json.webhooks.signing_secret);
  });

  it("is 401 without a key, with a wrong key, and with the alias header it works", async () => {
    expectEnvelope(await request(fx.server.url, "GET", LIST), 401, "Unauthorized");
    expectEnvelope(await request(fx.server.url, "GET", LIST, undefined, { "x-api-key": `sk_live_${"x".repeat(40)}` }), 401, "Unauthorized");
    const api = await newTenant(fx.server.url);
    expect((await request(fx.server.url, "GET", LIST, undefined, { "api-key": api.key })).status).toBe(200);
  });

  it("stores the secret encrypted, never in clear", async () => {
    const api = await newTenant(fx.server.url);
    const secret = (await api("GET", LIST)).json.webhooks.signing_secret as string;
    const [{ stored }] = await (await getDb())
      .select({ stored: webhookConfigs.secretEncrypted })
      .from(webhookConfigs)
      .where(eq(webhookConfigs.tenantId, api.tenantId));
    expect(stored.startsWith("v1:")).toBe(true);
    expect(stored).not.toContain(secret.slice(6, 20));
  });
});

describe("edit-webhooks", () => {
  it('merges partially, lists the changed fields, never returns the secret, and disables with "" or null', async () => {
    const api = await newTenant(fx.server.url);
    let res = await api("PATCH", EDIT, { campaign_status_url: `${fx.receiver.url}/status`, channel_status_url: `${fx.receiver.url}/channel` });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      message: "Webhooks updated",
      updated: ["campaign_status_url", "channel_status_url"],
      webhooks: {
        campaign_status_url: `${fx.receiver.url}/status`,
        campaign_progress_url: null,
        channel_status_url: `${fx.receiver.url}/channel`,
        group_activity_url: null,
      },
    });
    expect(res.text).not.toContain("whsec_");

    res = await api("PATCH", EDIT, { campaign_progress_url: "https://hooks.example.com/progress", campaign_status_url: `${fx.receiver.url}/status` });
    expect(res.json.updated).toEqual(["campaign_progress_url"]);
    expect(res.json.webhooks.campaign_status_url).toBe(`${fx.receiver.url}/status`);

    res = await api("PATCH", EDIT, { campaign_status_url: "", channel_status_url: null });
    expect(res.json.updated).toEqual(["campaign_status_url", "channel_status_url"]);
    expect(res.json.webhooks).toEqual({
      campaign_status_url: null,
      campaign_progress_url: "https://hooks.example.com/progress",
      channel_status_url: null,
      group_activity_url: null,
    });
    expect((await api("GET", LIST)).json.webhooks.campaign_progress_url).toBe("https://hooks.example.com/progress");
  });

  it.each([
    [{}, "campaign_status_url"],
    [{ campaign_status_url: "ftp://example.com/x" }, "campaign_status_url: must be an http or https URL"],
    [{ channel_status_url: "not a url" }, "channel_status_url: must be an absolute http(s) URL"],
    [{ group_activity_url: "ftp://example.com/x" }, "group_activity_url: must be an http or https URL"],
    [{ campaign_status_url: 42 }, "campaign_status_url"],
    [{ campaign_status_url: `https://example.com/${"a".repeat(2100)}` }, "campaign_status_url"],
    [{ signing_secret: "whsec_abc" }, "signing_secret"],
  ])("400 naming the field for %j", async (body, fragment) => {
    const api = await newTenant(fx.server.url);
    const env = expectEnvelope(await api("PATCH", EDIT, body), 400, "Bad Request");
    expect(env.message).toContain(fragment);
  });

  it("400 for malformed JSON, 401 without a key", async () => {
    const api = await newTenant(fx.server.url);
    expectEnvelope(await api("PATCH", EDIT, "{not json"), 400, "Bad Request");
    expectEnvelope(await request(fx.server.url, "PATCH", EDIT, { campaign_status_url: null }), 401, "Unauthorized");
  });

  describe("private targets are refused when WEBHOOK_ALLOW_PRIVATE is not set", () => {
    it.each([
      "http://127.0.0.1:8080/hook",
      "http://localhost/hook",
      "http://LOCALHOST:3000/",
      "http://app.localhost/hook",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::ffff:127.0.0.1]/hook",
      "http://[::1]/hook",
      "http://10.0.0.5/hook",
      "http://172.16.3.4/hook",
      "http://192.168.1.1/hook",
      "http://0.0.0.0/hook",
      "http://[fe80::1]/hook",
      "http://2130706433/hook",
    ])("%s", async (url) => {
      process.env.WEBHOOK_ALLOW_PRIVATE = "0";
      const api = await newTenant(fx.server.url);
      const env = expectEnvelope(await api("PATCH", EDIT, { campaign_status_url: url }), 400, "Bad Request");
      expect(env.message).toContain("campaign_status_url: must not point to a private, loopback, link-local or reserved address");
      expect((await api("GET", LIST)).json.webhooks.campaign_status_url).toBeNull();
    });

    it("a public address is accepted", async () => {
      process.env.WEBHOOK_ALLOW_PRIVATE = "0";
      const api = await newTenant(fx.server.url);
      expect((await api("PATCH", EDIT, { campaign_status_url: "https://93.184.216.34/hook" })).status).toBe(200);
    });
  });
});

describe("test-webhook", () => {
  it("sends a signed test payload that standardwebhooks verifies, and answers the receiver's status", async () => {
    const api = await newTenant(fx.server.url);
    const secret = (await api("GET", LIST)).json.webhooks.signing_secret;
    await api("PATCH", EDIT, { campaign_progress_url: `${fx.receiver.url}/progress` });
    const before = fx.receiver.received.length;
    const res = await api("POST", TEST("campaign_progress"));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ success: true, message: "Test webhook delivered", status: 200 });
    const got = fx.receiver.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0].path).toBe("/progress");
    const payload = new Webhook(secret).verify(got[0].body, webhookHeadersOf(got[0].headers)) as Record<string, any>;
    expect(payload).toMatchObject({
      type: "campaign_progress",
      test: true,
      data: { id_campaign: expect.any(String), status: "sending", groups: { total: 10 } },
    });
    expect(Date.parse(payload.timestamp)).not.toBeNaN();
    // A tampered body does not verify.
    expect(() => new Webhook(secret).verify(got[0].body.replace("sending", "paused"), webhookHeadersOf(got[0].headers))).toThrow();
  });

  it("group_activity (launches) has its own URL and test payload, signed like the others", async () => {
    const api = await newTenant(fx.server.url);
    const secret = (await api("GET", LIST)).json.webhooks.signing_secret;
    expectEnvelope(await api("POST", TEST("group_activity")), 400, "Bad Request");
    const edit = await api("PATCH", EDIT, { group_activity_url: `${fx.receiver.url}/groups` });
    expect(edit.json).toMatchObject({
      updated: ["group_activity_url"],
      webhooks: { group_activity_url: `${fx.receiver.url}/groups`, campaign_status_url: null },
    });
    expect((await api("GET", LIST)).json.webhooks.group_activity_url).toBe(`${fx.receiver.url}/groups`);
    const before = fx.receiver.received.length;
    expect((await api("POST", TEST("group_activity"))).json).toMatchObject({ success: true, status: 200 });
    const [got] = fx.receiver.received.slice(before);
    expect(got.path).toBe("/groups");
    const payload = new Webhook(secret).verify(got.body, webhookHeadersOf(got.headers)) as Record<string, any>;
    expect(payload).toMatchObject({
      type: "group_activity",
      test: true,
      data: { event: "members_changed", id_launch: expect.stringMatching(/^launch_/), id_group: expect.any(String), joined: expect.any(Array), left: [] },
    });
  });

  it("answers the receiver's non-2xx status, and 0 when unreachable", async () => {
    const api = await newTenant(fx.server.url);
    await api("PATCH", EDIT, { campaign_status_url: `${fx.receiver.url}/s`, channel_status_url: "http://127.0.0.1:9/closed" });
    fx.receiver.respond({ status: 503 });
    expect((await api("POST", TEST("campaign_status"))).json).toMatchObject({ success: true, status: 503 });
    fx.receiver.respond({ status: 302, headers: { location: `${fx.receiver.url}/elsewhere` } });
    const before = fx.receiver.received.length;
    expect((await api("POST", TEST("campaign_status"))).json.status).toBe(302);
    // The redirect was not followed.
    expect(fx.receiver.received.slice(before).map((r) => r.path)).toEqual(["/s"]);
    const res = await api("POST", TEST("channel_status"));
    expect(res.json.status).toBe(0);
    expect(res.json.message).toMatch(/unreachable/i);
  });

  it("400 when the type has no URL; 400 for an unknown type; 401 without a key", async () => {
    const api = await newTenant(fx.server.url);
    const env = expectEnvelope(await api("POST", TEST("channel_status")), 400, "Bad Request");
    expect(env.message).toContain("channel_status");
    expect(env.code).toBe("webhook_not_configured");
    const bad = expectEnvelope(await api("POST", TEST("campaign_finished")), 400, "Bad Request");
    expect(bad.message).toContain("type");
    expectEnvelope(await request(fx.server.url, "POST", TEST("channel_status")), 401, "Unauthorized");
  });

  it("at most 5 per type per 10 minutes: the 6th is 400 with limitExceeded, limitType, current, max; other types unaffected", async () => {
    const api = await newTenant(fx.server.url);
    await api("PATCH", EDIT, { campaign_status_url: `${fx.receiver.url}/a`, channel_status_url: `${fx.receiver.url}/b` });
    for (let i = 0; i < 5; i++) expect((await api("POST", TEST("campaign_status"))).status).toBe(200);
    const res = await api("POST", TEST("campaign_status"));
    const env = expectEnvelope(res, 400, "Bad Request");
    expect(res.json).toMatchObject({ code: "bad_request", limitExceeded: true, limitType: "test_webhook", current: 5, max: 5 });
    expect(env.message).toMatch(/5 test webhooks/);
    expect((await api("POST", TEST("channel_status"))).status).toBe(200);
  });

  it("a blocked address is status 0 when private targets are not allowed (checked again at connect time)", async () => {
    const api = await newTenant(fx.server.url);
    await api("PATCH", EDIT, { campaign_status_url: `${fx.receiver.url}/x` });
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    const before = fx.receiver.received.length;
    const res = await api("POST", TEST("campaign_status"));
    expect(res.json.status).toBe(0);
    expect(fx.receiver.received.length).toBe(before);
  });

  it("the dashboard's secret rotation: during the grace period both the old and the new secret verify", async () => {
    const api = await newTenant(fx.server.url);
    const old = (await api("GET", LIST)).json.webhooks.signing_secret as string;
    const { db, provider } = await getServices();
    const caller = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    const rotated = await caller.webhooks.rotateSecret();
    expect(rotated.signing_secret).not.toBe(old);
    expect(Date.parse(rotated.previous_valid_until) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect((await api("GET", LIST)).json.webhooks.signing_secret).toBe(rotated.signing_secret);
    await api("PATCH", EDIT, { campaign_status_url: `${fx.receiver.url}/rot` });
    const before = fx.receiver.received.length;
    await api("POST", TEST("campaign_status"));
    const [got] = fx.receiver.received.slice(before);
    expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(new Webhook(rotated.signing_secret).verify(got.body, webhookHeadersOf(got.headers))).toMatchObject({ test: true });
    expect(new Webhook(old).verify(got.body, webhookHeadersOf(got.headers))).toMatchObject({ test: true });
    // An API key cannot rotate (dashboard only).
    const keyCaller = createCallerFactory(appRouter)({ db, provider, caller: { kind: "apiKey", tenantId: api.tenantId, apiKeyId: "k" }, now: new Date() });
    await expect(keyCaller.webhooks.rotateSecret()).rejects.toThrow();
  });

  it("a partner token is 403 on test-webhook and 401 on list-webhooks", async () => {
    const api = await newTenant(fx.server.url);
    const { db, provider } = await getServices();
    const partner = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "partner", tenantId: api.tenantId, appId: "a", grantId: "g", scopes: ["statistics:read", "campaigns:read", "settings:read"] },
      now: new Date(),
    });
    await expect(partner.webhooks.test({ type: "campaign_status" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(partner.webhooks.list()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
