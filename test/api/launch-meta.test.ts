/**
 * Issue 27, item 2 (docs/launches.md#metas-conversions-api): a launch's `tracking.meta` and the Conversions API
 * event each counted click of its join link sends, through the outbox (meta_events) and the `meta-events` job's
 * pass (deliverMetaEvents), to a local receiver standing in for graph.facebook.com (META_GRAPH_URL).
 */
import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launches, metaEvents } from "../../db/schema";
import { env } from "../../server/env";
import { JobTimer } from "../../inngest/in-process/job-timer";
import { inngestFunctionOf } from "../../inngest/functions/periodic-job";
import { metaEventsJob } from "../../inngest/jobs/meta-events";
import { deliverMetaEvents } from "../../server/launches/funnel/deliver-meta-events";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { startReceiver, type Receiver } from "../webhooks/receiver";

const visitorAddress = "198.51.100.77";
const browser = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148";
const token = "EAAGm0PX4ZCpsBA-segredo-do-teste";
const template = { name: "Turma Meta #{n}", admins_only: true, admins: [] };

let server: TestServer;
let receiver: Receiver;
let api: Api;
let channelId: string;
const savedGraphUrl = process.env.META_GRAPH_URL;

beforeAll(async () => {
  receiver = await startReceiver();
  process.env.META_GRAPH_URL = `${receiver.url}/v25.0`;
  server = await startTestServer({ peerAddress: visitorAddress });
  api = await newTenant(server.url, { channelLimit: 20 });
  channelId = (await api("POST", "/api/external/create-channel", { name: "Canal Meta" })).json.id_channel;
});
afterAll(async () => {
  if (savedGraphUrl === undefined) delete process.env.META_GRAPH_URL;
  else process.env.META_GRAPH_URL = savedGraphUrl;
  await receiver?.close();
  await server?.close();
});

let pixels = 0;
/** A pixel id of its own per launch: each test reads only its own requests at the shared receiver. */
const newPixel = () => `10${Date.now()}${pixels++}`;

/** A launch with `tracking.meta` (none when undefined), its traffic alert off. */
async function createLaunch(meta: Record<string, unknown> | undefined) {
  const res = await api("POST", "/api/external/create-launch", {
    name: "Turma Meta",
    id_channel: [channelId],
    group_template: template,
    alerts: { clicks_without_joins_minutes: 0 },
    ...(meta ? { tracking: { meta } } : {}),
  });
  if (res.status !== 201) throw new Error(`create-launch: ${res.status} ${res.text}`);
  return res as { status: number; text: string; json: { id_launch: string; slug: string } };
}

function visit(slug: string, query = "", opts: { base?: string; userAgent?: string } = {}) {
  return fetch(`${opts.base ?? server.url}/g/${slug}${query}`, { redirect: "manual", headers: { "user-agent": opts.userAgent ?? browser } });
}

interface MetaRequest {
  path: string;
  body: { data: Record<string, any>[]; access_token: string; test_event_code?: string };
}
const requestsTo = (pixel: string): MetaRequest[] =>
  receiver.received.filter((r) => r.path === `/v25.0/${pixel}/events`).map((r) => ({ path: r.path, body: JSON.parse(r.body) }));

async function eventRows(launchId: string) {
  return (await getDb()).select().from(metaEvents).where(eq(metaEvents.launchId, launchId)).orderBy(metaEvents.id);
}

const pass = async (at = new Date()) => deliverMetaEvents(await getDb(), at);

/** The dashboard's tRPC caller (a signed-in owner). */
async function dashboard(tenantId = api.tenantId) {
  const { db, provider } = await getServices();
  return createCallerFactory(appRouter)({ db, provider, caller: { kind: "session", tenantId, userId: "u", role: "owner" }, now: new Date() });
}

describe("tracking.meta on create-launch, edit-launch and info-launch", () => {
  it("stores the token encrypted and never answers it; 400 naming the field; null removes it", async () => {
    const bad = await api("POST", "/api/external/create-launch", {
      name: "Ruim",
      id_channel: [channelId],
      group_template: template,
      tracking: { meta: { pixel_id: "pixel-abc", access_token: token } },
    });
    expect(expectEnvelope(bad, 400, "Bad Request").message).toContain("tracking.meta.pixel_id");
    const noToken = await api("POST", "/api/external/create-launch", {
      name: "Ruim",
      id_channel: [channelId],
      group_template: template,
      tracking: { meta: { pixel_id: "123" } },
    });
    expect(expectEnvelope(noToken, 400, "Bad Request").message).toContain("tracking.meta.access_token");

    const pixel = newPixel();
    const created = await createLaunch({ pixel_id: pixel, access_token: token, test_event_code: "TEST123" });
    expect(created.text).not.toContain(token);
    const id = created.json.id_launch;
    const info = await api("GET", `/api/external/info-launch/${id}`);
    expect(info.json.tracking).toEqual({ meta: { pixel_id: pixel, event_name: "Lead", test_event_code: "TEST123", access_token_set: true } });
    expect(info.text).not.toContain(token);
    const [row] = await (await getDb()).select({ token: launches.metaAccessToken }).from(launches).where(eq(launches.id, id));
    expect(row.token).toMatch(/^v1:/);
    expect(row.token).not.toContain(token);

    // Partial: the fields sent replace the launch's, the token stays when left out.
    const edited = await api("PUT", `/api/external/edit-launch/${id}`, { tracking: { meta: { event_name: "CompleteRegistration", test_event_code: null } } });
    expect(edited.status).toBe(200);
    expect(edited.json.tracking).toEqual({ meta: { pixel_id: pixel, event_name: "CompleteRegistration", test_event_code: null, access_token_set: true } });
    expect(edited.text).not.toContain(token);
    const trpcInfo = await (await dashboard()).launches.info({ id_launch: id });
    expect(JSON.stringify(trpcInfo)).not.toContain(token);

    const removed = await api("PUT", `/api/external/edit-launch/${id}`, { tracking: { meta: null } });
    expect(removed.json.tracking).toEqual({ meta: null });
    // Without tracking.meta, a partial one needs the pixel and the token.
    const partial = await api("PUT", `/api/external/edit-launch/${id}`, { tracking: { meta: { event_name: "Lead" } } });
    expect(expectEnvelope(partial, 400, "Bad Request").message).toContain("tracking.meta.pixel_id");
    expect(JSON.stringify(await (await dashboard()).launches.list())).not.toContain(token);
  });
});

describe("the Conversions API event of a counted click", () => {
  it("one request per pass with the event's fields; fbc from fbclid; event_id unique per click; nothing sent twice", async () => {
    const pixel = newPixel();
    const { json: l } = await createLaunch({ pixel_id: pixel, access_token: token, test_event_code: "TEST123" });
    const query = "?utm_source=facebook&utm_content=ad-1&fbclid=IwAR2F4-dbP0l7Mn1IawQQ";
    const before = Date.now();
    expect((await visit(l.slug, query)).status).toBe(302);
    expect((await visit(l.slug, "?utm_source=instagram")).status).toBe(302);
    const after = Date.now();
    // Nothing is sent by the visit itself: the event waits in the outbox for the job's pass.
    expect(requestsTo(pixel)).toEqual([]);
    const waiting = await eventRows(l.id_launch);
    expect(waiting).toHaveLength(2);
    // Until it is delivered the row keeps the visitor's address sealed (secret box), never in the clear.
    expect(JSON.stringify(waiting.map((r) => r.payload))).not.toContain(visitorAddress);
    for (const r of waiting) expect((r.payload as { user_data: { sealed_client_ip_address?: string } }).user_data.sealed_client_ip_address).toMatch(/^v1:/);

    expect(await pass()).toMatchObject({ sent: 2, requests: 1 });
    const [req] = requestsTo(pixel);
    expect(requestsTo(pixel)).toHaveLength(1);
    expect(req.body.access_token).toBe(token);
    expect(req.body.test_event_code).toBe("TEST123");
    expect(req.body.data).toHaveLength(2);
    const [withFbclid, plain] = req.body.data;
    expect(withFbclid).toEqual({
      event_name: "Lead",
      event_time: expect.any(Number),
      event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      action_source: "website",
      event_source_url: `${env.appUrl}/g/${l.slug}${query}`,
      user_data: { client_ip_address: visitorAddress, client_user_agent: browser, fbc: expect.stringMatching(/^fb\.1\.\d{13}\.IwAR2F4-dbP0l7Mn1IawQQ$/) },
    });
    const clickMs = Number(withFbclid.user_data.fbc.split(".")[2]);
    expect(clickMs).toBeGreaterThanOrEqual(before);
    expect(clickMs).toBeLessThanOrEqual(after);
    expect(withFbclid.event_time).toBe(Math.floor(clickMs / 1000));
    expect(plain.user_data).toEqual({ client_ip_address: visitorAddress, client_user_agent: browser });
    expect(plain.event_source_url).toBe(`${env.appUrl}/g/${l.slug}?utm_source=instagram`);
    expect(plain.event_id).not.toBe(withFbclid.event_id);

    // Sent once: later passes send nothing again; the finished rows keep no address or user agent.
    await pass();
    await pass(new Date(Date.now() + 3 * 86_400_000));
    expect(requestsTo(pixel)).toHaveLength(1);
    const rows = await eventRows(l.id_launch);
    expect(rows.map((r) => [r.state, r.attempts, r.lastStatus])).toEqual([
      ["sent", 1, 200],
      ["sent", 1, 200],
    ]);
    expect(JSON.stringify(rows.map((r) => r.payload))).not.toContain(visitorAddress);
    expect(JSON.stringify(rows.map((r) => r.payload))).not.toContain("iPhone");
  });

  it("a bot preview sends nothing, nor a visit of a paused launch; a capped visitor's clicks past the cap send nothing", async () => {
    const pixel = newPixel();
    const { json: l } = await createLaunch({ pixel_id: pixel, access_token: token });
    const preview = await visit(l.slug, "?fbclid=abc", { userAgent: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)" });
    expect(preview.status).toBe(200);
    expect(await eventRows(l.id_launch)).toHaveLength(0);

    // The cap: 60 counted clicks of one address in 10 minutes; the 61st is redirected and neither counted nor sent.
    const capped = await startTestServer({ peerAddress: "203.0.113.99" });
    try {
      for (let i = 0; i < 61; i += 10) {
        const answers = await Promise.all(Array.from({ length: Math.min(10, 61 - i) }, () => visit(l.slug, "", { base: capped.url })));
        for (const a of answers) expect(a.status).toBe(302);
      }
    } finally {
      await capped.close();
    }
    const info = await api("GET", `/api/external/info-launch/${l.id_launch}`);
    expect(info.json.totals.clicks).toBe(60);
    expect(await eventRows(l.id_launch)).toHaveLength(60);
    await pass();
    const reqs = requestsTo(pixel);
    expect(reqs).toHaveLength(1);
    expect(reqs[0].body.data).toHaveLength(60);
    expect(reqs[0].body).not.toHaveProperty("test_event_code");
    expect(new Set(reqs[0].body.data.map((e) => e.event_id)).size).toBe(60);
    expect(reqs[0].body.data.every((e) => e.user_data.client_ip_address === "203.0.113.99")).toBe(true);

    await api("PUT", `/api/external/edit-launch/${l.id_launch}`, { status: "paused" });
    expect((await visit(l.slug)).status).toBe(200);
    expect(await eventRows(l.id_launch)).toHaveLength(60);
  });

  it("a launch without tracking.meta writes no event", async () => {
    const { json: l } = await createLaunch(undefined);
    expect((await visit(l.slug, "?fbclid=abc")).status).toBe(302);
    expect(await eventRows(l.id_launch)).toHaveLength(0);
  });

  it("a receiver down, then answering 503, then up: the event arrives exactly once, on the retry schedule", async () => {
    const pixel = newPixel();
    const { json: l } = await createLaunch({ pixel_id: pixel, access_token: token });
    await receiver.stop();
    try {
      expect((await visit(l.slug)).status).toBe(302);
      const t0 = new Date();
      expect(await pass(t0)).toMatchObject({ retrying: 1, sent: 0 });
      const [down] = await eventRows(l.id_launch);
      expect(down).toMatchObject({ state: "pending", attempts: 1, lastStatus: 0 });
      expect(down.lastError).toMatch(/ECONNREFUSED|fetch failed/);
      // The webhooks' schedule: the first retry 5 s (±20 %) later, not before.
      expect(down.nextAttemptAt.getTime() - t0.getTime()).toBeGreaterThanOrEqual(4000);
      expect(await pass(t0)).toMatchObject({ retrying: 0, sent: 0, requests: 0 });
    } finally {
      await receiver.start();
    }
    receiver.respond({ status: 503, body: '{"error":{"message":"Service temporarily unavailable","code":2}}' });
    const t1 = new Date(Date.now() + 10_000);
    expect(await pass(t1)).toMatchObject({ retrying: 1 });
    expect((await eventRows(l.id_launch))[0]).toMatchObject({ state: "pending", attempts: 2, lastStatus: 503 });
    expect(requestsTo(pixel)).toHaveLength(1);

    receiver.respond({});
    const t2 = new Date(Date.now() + 10 * 60_000);
    expect(await pass(t2)).toMatchObject({ sent: 1 });
    await pass(new Date(Date.now() + 86_400_000));
    expect(requestsTo(pixel)).toHaveLength(2);
    const [event] = await eventRows(l.id_launch);
    expect(event).toMatchObject({ state: "sent", attempts: 3, lastStatus: 200, lastError: null });
    // The one that got through is the same event (same event_id) as the one that failed.
    const [failed, delivered] = requestsTo(pixel);
    expect(delivered.body.data[0].event_id).toBe(failed.body.data[0].event_id);
    expect(delivered.body.data[0].event_id).toBe(event.eventId);
  });

  it("a 400 from Meta is final, its message in the dashboard's log; a 429 is retried", async () => {
    const pixel = newPixel();
    const { json: l } = await createLaunch({ pixel_id: pixel, access_token: token });
    const metaError = {
      error: {
        message: "Invalid parameter",
        type: "OAuthException",
        code: 100,
        error_subcode: 2804003,
        error_user_msg: "The access token could not be decrypted",
        fbtrace_id: "A1b2",
      },
    };
    receiver.respond({ status: 400, body: JSON.stringify(metaError) });
    try {
      expect((await visit(l.slug, "?fbclid=x1")).status).toBe(302);
      expect(await pass()).toMatchObject({ failed: 1 });
      await pass(new Date(Date.now() + 2 * 86_400_000));
      expect(requestsTo(pixel)).toHaveLength(1);

      receiver.respond({ status: 429, headers: { "retry-after": "120" }, body: '{"error":{"message":"Too many calls","code":17}}' });
      expect((await visit(l.slug)).status).toBe(302);
      const now = new Date();
      expect(await pass(now)).toMatchObject({ retrying: 1 });
      const rows = await eventRows(l.id_launch);
      // Retry-After is honoured over the schedule's first 5 s.
      expect(rows[1].nextAttemptAt.getTime() - now.getTime()).toBeGreaterThanOrEqual(120_000);
    } finally {
      receiver.respond({});
    }

    const log = await (await dashboard()).launchStats.metaEvents({ id_launch: l.id_launch, limit: 20 });
    expect(log.totals).toEqual({ pending: 1, sent: 0, failed: 1, canceled: 0 });
    expect(log.events).toHaveLength(2);
    expect(log.events[0]).toMatchObject({ state: "pending", attempts: 1, last_status: 429, fbc: false });
    expect(log.events[1]).toMatchObject({
      event_name: "Lead",
      state: "failed",
      attempts: 1,
      last_status: 400,
      last_error: "HTTP 400: Invalid parameter (The access token could not be decrypted)",
      next_attempt_at: null,
      fbc: true,
    });
    expect(JSON.stringify(log)).not.toContain(token);

    // Removing tracking.meta cancels what was still waiting; nothing more is sent.
    await api("PUT", `/api/external/edit-launch/${l.id_launch}`, { tracking: { meta: null } });
    expect(await pass(new Date(Date.now() + 86_400_000))).toMatchObject({ canceled: 1 });
    expect(requestsTo(pixel)).toHaveLength(2);
    expect((await visit(l.slug)).status).toBe(302);
    expect(await eventRows(l.id_launch)).toHaveLength(2);

    // Another account's launch is not found.
    const other = await newTenant(server.url);
    const stranger = await dashboard(other.tenantId);
    await expect(stranger.launchStats.metaEvents({ id_launch: l.id_launch, limit: 5 })).rejects.toThrow(/not found/);
  });
});

describe("the meta-events job", () => {
  it("in process, its timer sends a click's event a moment after the redirect", async () => {
    const pixel = newPixel();
    const { json: l } = await createLaunch({ pixel_id: pixel, access_token: token });
    const timer = new JobTimer(metaEventsJob, await getServices(), { firstRunMs: 0, intervalMs: 100 }).start();
    try {
      expect((await visit(l.slug, "?fbclid=job")).status).toBe(302);
      await waitFor("the event at the receiver", () => requestsTo(pixel).length === 1);
      await waitFor("the event recorded as sent", async () => (await eventRows(l.id_launch))[0]?.state === "sent");
    } finally {
      await timer.stop();
    }
    expect(requestsTo(pixel)).toHaveLength(1);
  });

  it("under Inngest, its cron function (every minute) sends what is due", async () => {
    const pixel = newPixel();
    const { json: l } = await createLaunch({ pixel_id: pixel, access_token: token });
    expect((await visit(l.slug)).status).toBe(302);
    const t = new InngestTestEngine({ function: inngestFunctionOf(metaEventsJob) });
    const { result } = await t.execute();
    expect(result).toMatchObject({ sent: 1, requests: 1 });
    expect(requestsTo(pixel)).toHaveLength(1);
    expect(JSON.stringify(inngestFunctionOf(metaEventsJob).opts)).toContain("* * * * *");
  });
});
