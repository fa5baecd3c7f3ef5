import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { partnerApps, webhookDeliveries } from "../../db/schema";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { recordMarkerEvent } from "./marker-events";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { apiFor, newTenant, waitFor, type Api } from "../helpers";
import { authorizeApp, developerPortal, registerApp, signedInUser, type EndUser } from "../oauth-client";
import { withServerAndReceiver, withWebhookRunner } from "./fixtures";
import { startReceiver, webhookHeadersOf, type Receiver } from "./receiver";

const fx = withServerAndReceiver();
const redirectUri = "http://127.0.0.1:8765/callback";
const webhookRunner = withWebhookRunner("100,200,300");
let developer: Api;

beforeAll(async () => {
  // Sign-in and the OAuth issuer are the test server.
  process.env.APP_URL = fx.server.url;
  process.env.NEXTAUTH_URL = fx.server.url;
  process.env.RATE_LIMIT_OAUTH_IP_PER_MINUTE = "100000";
  developer = await newTenant(fx.server.url);
});

async function dashboardOf(tenantId: string) {
  const { db, provider } = await getServices();
  return createCallerFactory(appRouter)({ db, provider, caller: { kind: "session", tenantId, userId: "user_x", role: "owner" }, now: new Date() });
}

/** A confidential app of the developer with its webhook at `url`, and its signing secret from the portal. */
async function appWithWebhook(url: string) {
  const { app, client_secret } = await registerApp(developer.tenantId, { webhook_url: url });
  const secret = (await (await developerPortal(developer.tenantId)).webhookSecret({ client_id: app.client_id })).signing_secret;
  return { client_id: app.client_id, client_secret: client_secret!, redirect_uri: redirectUri, secret };
}

/** A signed-in user whose tenant has a 3-group segment, and its API client. */
async function endUser(): Promise<{ user: EndUser; api: Api; segment: string }> {
  const user = await signedInUser(fx.server.url);
  const { api, segment } = await tenantWithSegment(fx.server.url, 3, 3, apiFor(fx.server.url, user.tenantId, user.apiKey));
  return { user, api, segment };
}

/**
 * An app with its webhook at `appUrl`, authorized with campaigns:read by a new user whose account sends
 * its own campaign_status to `ownUrl`; `status(n)` records a campaign_status event of that account.
 */
async function authorizedApp(appUrl: string, ownUrl: string) {
  const app = await appWithWebhook(appUrl);
  const { user, api } = await endUser();
  await authorizeApp(fx.server.url, user, app, "campaigns:read");
  expect((await api("PATCH", "/api/external/edit-webhooks", { campaign_status_url: ownUrl })).status).toBe(200);
  const db = await getDb();
  const status = (n: number) =>
    db.transaction((tx) => recordMarkerEvent(tx, user.tenantId, "campaign_status", { id_campaign: `campaign_${n}`, name: "C", status: "pending" }, new Date()));
  return { app, user, db, status };
}

/** What `receiver` got under `path`, each verified with the secret (throws if one does not verify). */
const verified = (receiver: Receiver, path: string, secret: string) =>
  receiver.received.filter((r) => r.path === path).map((r) => new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as any);

describe("partner apps' webhooks", () => {
  let dispatch: InProcessRunner;
  beforeAll(async () => {
    dispatch = new InProcessRunner(await getServices()).start();
  });
  afterAll(() => dispatch.stop());

  it(
    "an app authorized with campaigns:read gets the tenant's campaign events, signed with its own secret and naming the tenant; " +
      "other apps and the tenant's own log do not",
    async () => {
      const app = await appWithWebhook(`${fx.receiver.url}/app-full`);
      const statsOnly = await appWithWebhook(`${fx.receiver.url}/app-stats`);
      const { user, api, segment } = await endUser();
      await authorizeApp(fx.server.url, user, app, "statistics:read campaigns:read");
      await authorizeApp(fx.server.url, user, statsOnly, "statistics:read");
      expect((await api("PATCH", "/api/external/edit-webhooks", { campaign_status_url: `${fx.receiver.url}/own` })).status).toBe(200);

      const { id_campaign } = await createCampaign(api, segment);
      const events = await waitFor("the app's completed campaign_status", () => {
        const got = verified(fx.receiver, "/app-full", app.secret);
        return got.some((e) => e.type === "campaign_status" && e.data.status === "completed") && got;
      });
      const statuses = events.filter((e) => e.type === "campaign_status");
      expect(statuses.map((e) => e.data.status)).toEqual(["pending", "sending", "completed"]);
      expect(events.every((e) => e.sub === user.tenantId && e.data.id_campaign === id_campaign)).toBe(true);
      expect(events.some((e) => e.type === "campaign_progress" && e.data.groups.sent === 3)).toBe(true);
      // The body's keys in order, `sub` before `data`.
      expect(Object.keys(events[0])).toEqual(["type", "timestamp", "sub", "data"]);

      // The tenant's own URL got its copy, without `sub`; its delivery log lists only its own.
      const own = await waitFor("the tenant's completed event", () => {
        const got = fx.receiver.received.filter((r) => r.path === "/own").map((r) => JSON.parse(r.body));
        return got.some((e) => e.data.status === "completed") && got;
      });
      expect(own.every((e) => !("sub" in e))).toBe(true);
      const log = await (await dashboardOf(user.tenantId)).webhooks.deliveries({ limit: 100 });
      expect(log.map((d) => d.type)).toEqual(["campaign_status", "campaign_status", "campaign_status"]);
      // An app authorized without campaigns:read gets nothing.
      expect(fx.receiver.received.filter((r) => r.path === "/app-stats")).toEqual([]);
    },
  );

  it("group_activity (launches) goes to the account only, never to its apps", async () => {
    const { app, user, db, status } = await authorizedApp(`${fx.receiver.url}/app-ga`, `${fx.receiver.url}/own-ga-status`);
    expect(
      (await apiFor(fx.server.url, user.tenantId, user.apiKey)("PATCH", "/api/external/edit-webhooks", { group_activity_url: `${fx.receiver.url}/own-ga` }))
        .status,
    ).toBe(200);
    await db.transaction((tx) =>
      recordMarkerEvent(tx, user.tenantId, "group_activity", { event: "group_full", id_launch: "launch_x", id_group: "1@g.us", members: 980 }, new Date()),
    );
    await status(1);
    // Events fan out in order: once the app has the later campaign_status, the group_activity was fanned out too.
    await waitFor("the app's campaign_status", () => verified(fx.receiver, "/app-ga", app.secret).length === 1);
    await waitFor("the account's group_activity", () => fx.receiver.received.some((r) => r.path === "/own-ga"));
    expect(verified(fx.receiver, "/app-ga", app.secret).map((e) => e.type)).toEqual(["campaign_status"]);
  });

  it("revoking the app's access stops its deliveries, including those already queued", async () => {
    const { app, user, db, status } = await authorizedApp(`${fx.receiver.url}/app-revoked`, `${fx.receiver.url}/own-revoked`);

    await status(1);
    await waitFor("the app's first event", () => verified(fx.receiver, "/app-revoked", app.secret).length === 1);
    // The next event is fanned out (as the runner does), then the access is revoked before it is sent.
    await webhookRunner.runner.stop();
    await status(2);
    await fanOutEvents(db, new Date());
    await (await dashboardOf(user.tenantId)).partnerApps.revokeAccess({ client_id: app.client_id });
    await webhookRunner.start();
    await status(3);
    await waitFor("the tenant's own third event", () => fx.receiver.received.filter((r) => r.path === "/own-revoked").length === 3);
    const appRows = await waitFor("the app's second delivery settled", async () => {
      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.target, `app:${app.client_id}`));
      return rows.every((r) => r.state !== "pending") && rows;
    });
    expect(fx.receiver.received.filter((r) => r.path === "/app-revoked")).toHaveLength(1);
    // Event 2 had been queued for the app: canceled at send time. Event 3 never was.
    expect(appRows.map((r) => r.state).sort()).toEqual(["canceled", "delivered"]);
  });

  it("rotating the app's secret: the portal shows the new one, and deliveries carry both signatures during the overlap", async () => {
    const { app, status } = await authorizedApp(`${fx.receiver.url}/app-rotated`, `${fx.receiver.url}/own-rotated`);
    const portal = await developerPortal(developer.tenantId);
    const rotated = await portal.rotateWebhookSecret({ client_id: app.client_id });
    expect(rotated.signing_secret).not.toBe(app.secret);
    expect((await portal.webhookSecret({ client_id: app.client_id })).signing_secret).toBe(rotated.signing_secret);
    await status(1);
    const [got] = await waitFor("the app's event", () => {
      const r = fx.receiver.received.filter((x) => x.path === "/app-rotated");
      return r.length === 1 && r;
    });
    expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [rotated.signing_secret, app.secret]) {
      expect(new Webhook(secret).verify(got.body, webhookHeadersOf(got.headers))).toMatchObject({ type: "campaign_status" });
    }
  });

  it("the portal shows and rotates an app's secret for its own developer only", async () => {
    const app = await appWithWebhook(`${fx.receiver.url}/app-own`);
    const stranger = await developerPortal((await newTenant(fx.server.url)).tenantId);
    await expect(stranger.webhookSecret({ client_id: app.client_id })).rejects.toThrow(/No such partner app/);
    await expect(stranger.rotateWebhookSecret({ client_id: app.client_id })).rejects.toThrow(/No such partner app/);
    expect((await (await developerPortal(developer.tenantId)).webhookSecret({ client_id: app.client_id })).signing_secret).toBe(app.secret);
  });

  it("a 410 from the app's URL removes the URL from the app", async () => {
    const gone = await startReceiver();
    try {
      gone.respond({ status: 410 });
      const { app, db, status } = await authorizedApp(`${gone.url}/app-gone`, `${fx.receiver.url}/own-gone`);
      await status(1);
      const [row] = await waitFor("the app's URL removed", async () => {
        const rows = await db.select({ webhookUrl: partnerApps.webhookUrl }).from(partnerApps).where(eq(partnerApps.id, app.client_id));
        return rows[0].webhookUrl === null && rows;
      });
      expect(row.webhookUrl).toBeNull();
      expect(gone.received).toHaveLength(1);
    } finally {
      await gone.close();
    }
  });

  it("a partner app's slow endpoint does not hold back the tenant's own deliveries", async () => {
    const slow = await startReceiver();
    try {
      slow.respond({ delayMs: 3000 });
      const { status } = await authorizedApp(`${slow.url}/app-slow`, `${fx.receiver.url}/own-fast`);
      await status(1);
      await waitFor("the app's endpoint busy", () => slow.received.length > 0);
      const start = Date.now();
      await status(2);
      await waitFor("the tenant's second event", () => fx.receiver.received.filter((r) => r.path === "/own-fast").length === 2, 2500);
      expect(Date.now() - start).toBeLessThan(1500);
    } finally {
      await webhookRunner.runner.stop();
      await slow.close();
    }
  });

  it("the portal refuses a private webhook URL for an app once private targets are not allowed", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    try {
      await expect(registerApp(developer.tenantId, { webhook_url: "http://10.0.0.7/hook" })).rejects.toThrow(/webhook_url: must not point to a private/);
    } finally {
      process.env.WEBHOOK_ALLOW_PRIVATE = "1";
    }
  });
});
