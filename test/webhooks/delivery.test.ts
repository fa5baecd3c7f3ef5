import { and, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { webhookAttempts, webhookConfigs, webhookDeliveries } from "../../db/schema";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { recordMarkerEvent } from "./marker-events";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { newTenant, waitFor, type Api } from "../helpers";
import { withServerAndReceiver, withWebhookRunner } from "./fixtures";
import { startReceiver, webhookHeadersOf } from "./receiver";

const fx = withServerAndReceiver();
const webhookRunner = withWebhookRunner("100,200,300,300,300,300,300,300");

async function configure(api: Api, path: string, types = ["campaign_status_url", "campaign_progress_url", "channel_status_url"]) {
  const res = await api("PATCH", "/api/external/edit-webhooks", Object.fromEntries(types.map((t) => [t, `${fx.receiver.url}${path}/${t}`])));
  expect(res.status).toBe(200);
  return (await api("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;
}

/** What the receiver got under `path`, each verified with standardwebhooks (throws if any fails). */
function verifiedUnder(path: string, secret: string) {
  return fx.receiver.received
    .filter((r) => r.path.startsWith(path))
    .map((r) => ({ ...r, id: String(r.headers["webhook-id"]), event: new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as any }));
}

/** Outbox events recorded the way the domain does it: in a transaction. */
async function record(tenantId: string, events: { campaign: string; seq: number }[]) {
  const db = await getDb();
  for (const e of events) {
    await db.transaction((tx) =>
      recordMarkerEvent(
        tx,
        tenantId,
        "campaign_progress",
        { id_campaign: e.campaign, name: "C", status: "sending", seq: e.seq, groups: { total: 9, sent: e.seq, pending: 9 - e.seq, failed: 0 } },
        new Date(),
      ),
    );
  }
}

describe("webhook delivery (in-process runner)", () => {
  it("a real campaign: every status change and progress arrives signed, in order, progress at most once a second plus one at the end", async () => {
    const { api, segment } = await tenantWithSegment(fx.server.url, 6, 2);
    const path = `/real-${api.tenantId}`;
    const secret = await configure(api, path);
    const dispatch = new InProcessRunner(await getServices()).start();
    try {
      const { id_campaign } = await createCampaign(api, segment);
      const got = await waitFor("completed campaign_status", () => {
        const v = verifiedUnder(path, secret);
        return v.some((r) => r.event.type === "campaign_status" && r.event.data.status === "completed") && v;
      });
      const statuses = got.filter((r) => r.event.type === "campaign_status").map((r) => r.event.data);
      expect(statuses.map((d) => d.status)).toEqual(["pending", "sending", "completed"]);
      expect(statuses.slice(1).map((d) => d.previous_status)).toEqual(["pending", "sending"]);
      expect(statuses.every((d) => d.id_campaign === id_campaign && d.name === "Oferta")).toBe(true);
      expect(statuses[2].groups).toEqual({ total: 6, sent: 6, pending: 0, failed: 0 });
      // The loop's last progress (pending 0, still `sending`) and the forced one at the end may arrive apart.
      await waitFor("final progress", () =>
        verifiedUnder(path, secret).some((r) => r.event.type === "campaign_progress" && r.event.data.status === "completed"),
      );
      const progress = verifiedUnder(path, secret)
        .filter((r) => r.event.type === "campaign_progress")
        .map((r) => r.event);
      const times = progress.map((p) => Date.parse(p.timestamp));
      // At most one a second, except the last (forced at the end).
      for (let i = 1; i < times.length - 1; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(1000);
      expect(progress.at(-1).data).toMatchObject({ status: "completed", groups: { sent: 6, pending: 0 } });
      // Every progress event (the loop's, written by the sent mark's own statement, and the last) has the
      // same shape as campaign_status's: exactly these fields, the counters adding up.
      for (const p of progress) {
        expect(Object.keys(p).sort()).toEqual(["data", "timestamp", "type"]);
        expect(Object.keys(p.data).sort()).toEqual(["groups", "id_campaign", "name", "status"]);
        expect(p.data).toMatchObject({ id_campaign, name: "Oferta" });
        const g = p.data.groups;
        expect(Object.keys(g).sort()).toEqual(["failed", "pending", "sent", "total"]);
        expect(g.total).toBe(6);
        expect(g.pending).toBe(g.total - g.sent - g.failed);
      }
      expect(progress.length).toBeGreaterThanOrEqual(2);
      // The path tells the type apart: each type went to its own URL.
      expect(got.every((r) => r.path.endsWith(`${r.event.type}_url`))).toBe(true);
    } finally {
      await dispatch.stop();
    }
  });

  it("a receiver down for a while, then up: everything arrives once it is back, in order per campaign, none lost, attempts logged", async () => {
    const api = await newTenant(fx.server.url);
    const path = `/down-${api.tenantId}`;
    const secret = await configure(api, path, ["campaign_progress_url"]);
    await fx.receiver.stop();
    const events = [1, 2, 3, 4].flatMap((seq) =>
      ["campaign_a", "campaign_b", "campaign_c"].map((campaign) => ({ campaign: `${campaign}-${api.tenantId}`, seq })),
    );
    await record(api.tenantId, events);
    const db = await getDb();
    await waitFor("failed attempts while down", async () => {
      const rows = await db
        .select()
        .from(webhookAttempts)
        .where(and(eq(webhookAttempts.tenantId, api.tenantId), eq(webhookAttempts.status, 0)));
      return rows.length >= 6;
    });
    await fx.receiver.start();
    const got = await waitFor("all 12 events", () => {
      const v = verifiedUnder(path, secret);
      return v.length >= 12 && v;
    });
    // The receiver answers before the runner records each attempt: wait for the records.
    const deliveries = await waitFor("every delivery recorded as delivered", async () => {
      const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, api.tenantId));
      return rows.length === 12 && rows.every((d) => d.state === "delivered") && rows;
    });
    const all = verifiedUnder(path, secret);
    expect(all).toHaveLength(12);
    expect(new Set(all.map((r) => r.id)).size).toBe(12);
    for (const campaign of new Set(events.map((e) => e.campaign))) {
      expect(got.filter((r) => r.event.data.id_campaign === campaign).map((r) => r.event.data.seq)).toEqual([1, 2, 3, 4]);
    }
    const attempts = await db.select().from(webhookAttempts).where(eq(webhookAttempts.tenantId, api.tenantId));
    const first = deliveries.filter((d) => d.attempts > 1);
    expect(first.length).toBeGreaterThanOrEqual(3);
    for (const d of deliveries) {
      const log = attempts.filter((a) => a.deliveryId === d.id);
      expect(log).toHaveLength(d.attempts);
      expect(log.at(-1)!.status).toBe(200);
      expect(log.slice(0, -1).every((a) => a.status === 0 && a.error && a.durationMs >= 0)).toBe(true);
    }
    // webhook-id is stable across retries; webhook-timestamp is fresh per attempt (the retry came later).
    expect(all.every((r) => r.id === `msg_${deliveries.find((d) => d.messageId === r.id)!.eventId}`)).toBe(true);
  });

  it("gives up after the schedule; a given-up event stops holding back later ones of the same campaign", async () => {
    process.env.WEBHOOK_RETRY_SCHEDULE = "30,30";
    const api = await newTenant(fx.server.url);
    const path = `/giveup-${api.tenantId}`;
    const secret = await configure(api, path, ["campaign_progress_url"]);
    fx.receiver.respond({ status: 500 });
    await record(api.tenantId, [{ campaign: "c1", seq: 1 }]);
    const db = await getDb();
    const [failed] = await waitFor("given up", async () => {
      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.tenantId, api.tenantId), eq(webhookDeliveries.state, "failed")));
      return rows.length > 0 && rows;
    });
    expect(failed.attempts).toBe(3);
    expect(failed.lastError).toMatch(/gave up after 3 attempts/);
    fx.receiver.respond({});
    await record(api.tenantId, [{ campaign: "c1", seq: 2 }]);
    await waitFor("seq 2", () => verifiedUnder(path, secret).some((r) => r.event.data.seq === 2 && r.headers["webhook-id"] !== failed.messageId));

    // The dashboard's redeliver sends the given-up event again, with the same webhook-id.
    const { provider } = await getServices();
    const caller = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    const log = await caller.webhooks.deliveries({ state: "failed", limit: 50 });
    expect(log.map((d) => d.id)).toEqual([failed.id]);
    expect(log[0].log.map((a) => a.status)).toEqual([500, 500, 500]);
    await caller.webhooks.redeliver({ id: failed.id });
    await waitFor(
      "redelivered",
      () =>
        verifiedUnder(path, secret)
          .filter((r) => r.id === failed.messageId)
          .some((r) => r.event.data.seq === 1 && r.headers["webhook-id"] === failed.messageId) &&
        fx.receiver.received.filter((r) => r.headers["webhook-id"] === failed.messageId).length === 4,
    );
    // The receiver answers before the runner records the attempt: wait for the record, not just the request.
    await waitFor("redelivery recorded", async () =>
      (await caller.webhooks.deliveries({ type: "campaign_progress", state: "delivered", limit: 50 })).some((d) => d.id === failed.id),
    );
  });

  it("honours Retry-After", async () => {
    process.env.WEBHOOK_RETRY_SCHEDULE = "20";
    const api = await newTenant(fx.server.url);
    const path = `/retry-after-${api.tenantId}`;
    await configure(api, path, ["campaign_progress_url"]);
    fx.receiver.respond({ status: 429, headers: { "retry-after": "1" } });
    await record(api.tenantId, [{ campaign: "c1", seq: 1 }]);
    await waitFor("first attempt", () => fx.receiver.received.some((r) => r.path.startsWith(path)));
    fx.receiver.respond({});
    const got = await waitFor("second attempt", () => {
      const v = fx.receiver.received.filter((r) => r.path.startsWith(path));
      return v.length >= 2 && v;
    });
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(950);
    expect(Number(got[1].headers["webhook-timestamp"])).toBeGreaterThanOrEqual(Number(got[0].headers["webhook-timestamp"]));
  });

  it("410 Gone disables the URL: the delivery ends and later events are not sent there", async () => {
    const api = await newTenant(fx.server.url);
    const path = `/gone-${api.tenantId}`;
    await configure(api, path, ["campaign_progress_url", "campaign_status_url"]);
    fx.receiver.respond({ status: 410 });
    await record(api.tenantId, [{ campaign: "c1", seq: 1 }]);
    const db = await getDb();
    await waitFor("URL disabled", async () => {
      const [c] = await db.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, api.tenantId));
      return c.campaignProgressUrl === null;
    });
    const d = await waitFor("delivery ended", async () => {
      const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, api.tenantId));
      return row?.state !== "pending" && row;
    });
    expect(d).toMatchObject({ state: "failed", attempts: 1, lastStatus: 410 });
    // The other URL is untouched.
    expect((await api("GET", "/api/external/list-webhooks")).json.webhooks.campaign_status_url).toBe(`${fx.receiver.url}${path}/campaign_status_url`);
    fx.receiver.respond({});
    await record(api.tenantId, [{ campaign: "c1", seq: 2 }]);
    await new Promise((r) => setTimeout(r, 300));
    expect(fx.receiver.received.filter((r) => r.path.startsWith(path))).toHaveLength(1);
  });

  it("one tenant's slow receiver does not delay another tenant's deliveries", async () => {
    const slow = await newTenant(fx.server.url);
    const fast = await newTenant(fx.server.url);
    const slowReceiver = await startReceiver();
    try {
      slowReceiver.respond({ delayMs: 3000 });
      await slow("PATCH", "/api/external/edit-webhooks", { campaign_progress_url: `${slowReceiver.url}/slow` });
      const secret = await configure(fast, `/fast-${fast.tenantId}`, ["campaign_progress_url"]);
      await record(
        slow.tenantId,
        [1, 2, 3].map((seq) => ({ campaign: `s${seq}`, seq })),
      );
      await waitFor("slow receiver busy", () => slowReceiver.received.length > 0);
      const start = Date.now();
      await record(fast.tenantId, [{ campaign: "f", seq: 1 }]);
      await waitFor("fast delivery", () => verifiedUnder(`/fast-${fast.tenantId}`, secret).length === 1, 2500);
      expect(Date.now() - start).toBeLessThan(1500);
    } finally {
      await webhookRunner.runner.stop();
      await slowReceiver.close();
    }
  });
});
