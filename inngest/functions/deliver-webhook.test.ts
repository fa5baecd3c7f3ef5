import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { webhookAttempts, webhookDeliveries } from "../../db/schema";
import { recordMarkerEvent } from "../../test/webhooks/marker-events";
import { deliverOne } from "../../server/webhooks/deliver-webhooks";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { newTenant } from "../../test/helpers";
import { withServerAndReceiver } from "../../test/webhooks/fixtures";
import { webhookHeadersOf } from "../../test/webhooks/receiver";
import { webhookDeliveryEvents } from "../client";
import { deliverWebhook } from "./deliver-webhook";
import { sweepWebhooks } from "./sweep-webhooks";

const fx = withServerAndReceiver();
beforeEach(() => {
  process.env.WEBHOOK_RETRY_SCHEDULE = "10,10";
});
afterEach(() => {
  delete process.env.WEBHOOK_RETRY_SCHEDULE;
});

const instantSleeps = Array.from({ length: 60 }, (_, i) => ({ id: `wait-${i + 1}`, handler: () => null }));

/** A tenant with a campaign_status URL and `n` recorded events, fanned out into deliveries. */
async function tenantWithDeliveries(n: number) {
  const api = await newTenant(fx.server.url);
  const path = `/inngest-${api.tenantId}`;
  await api("PATCH", "/api/external/edit-webhooks", { campaign_status_url: `${fx.receiver.url}${path}` });
  const secret = (await api("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;
  const db = await getDb();
  for (let i = 1; i <= n; i++) {
    await db.transaction((tx) =>
      recordMarkerEvent(tx, api.tenantId, "campaign_status", { id_campaign: "campaign_x", name: "X", status: "sending", seq: i }, new Date()),
    );
  }
  await fanOutEvents(db, new Date());
  const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, api.tenantId)).orderBy(webhookDeliveries.eventId);
  return { api, path, secret, rows };
}

describe("deliver-webhook (Inngest function)", () => {
  it("registers one function per delivery event, concurrency keyed by tenant (its partner apps' copies apart)", () => {
    const [config] = (deliverWebhook as unknown as { getConfig(o: object): object[] }).getConfig({
      baseUrl: new URL("http://localhost:3000/api/inngest"),
      appPrefix: "group-campaigns",
    });
    expect(config).toMatchObject({ triggers: [{ event: "webhook/delivery.requested" }], concurrency: [{ key: "event.data.queue", limit: 8 }] });
    const queues = webhookDeliveryEvents([
      { id: 1, tenantId: "tenant_a", target: "tenant" },
      { id: 2, tenantId: "tenant_a", target: "app:client_x" },
      { id: 3, tenantId: "tenant_a", target: "app:client_y" },
    ]).map((e) => e.data.queue);
    expect(queues).toEqual(["tenant_a", "tenant_a:apps", "tenant_a:apps"]);
  });

  it("delivers through the domain step, signed; retries after a failure by sleeping until the retry time", async () => {
    const { api, path, secret, rows } = await tenantWithDeliveries(1);
    fx.receiver.respond({ status: 503 });
    let calls = 0;
    const t = new InngestTestEngine({
      function: deliverWebhook,
      steps: instantSleeps.map((s) => ({
        ...s,
        handler: () => {
          // The receiver recovers during the first sleep; wait out the (10 ms) retry delay.
          fx.receiver.respond({});
          calls++;
          return new Promise((r) => setTimeout(() => r(null), 50));
        },
      })),
    });
    const { result, ctx } = await t.execute({
      events: [{ name: "webhook/delivery.requested", data: { id_delivery: rows[0].id, tenant_id: api.tenantId, queue: api.tenantId } }],
    });
    expect(result).toMatchObject({ id_delivery: rows[0].id, state: "delivered", status: 200 });
    expect(ctx.step.run.mock.calls.map((c) => c[0])).toEqual(["attempt-1", "attempt-2"]);
    expect(calls).toBe(1);
    const got = fx.receiver.received.filter((r) => r.path === path);
    expect(got).toHaveLength(2);
    for (const r of got) expect(new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers))).toMatchObject({ type: "campaign_status", data: { seq: 1 } });
    const attempts = await (await getDb()).select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, rows[0].id));
    expect(attempts.map((a) => a.status)).toEqual([503, 200]);
  });

  it("a later event of the same campaign waits for the earlier one instead of overtaking it", async () => {
    const { api, path, rows } = await tenantWithDeliveries(2);
    const t = new InngestTestEngine({ function: deliverWebhook, steps: instantSleeps });
    const second = await t.execute({
      events: [{ name: "webhook/delivery.requested", data: { id_delivery: rows[1].id, tenant_id: api.tenantId, queue: api.tenantId } }],
    });
    // Nothing was sent for it while the first was pending (its run ran out of looks, the sweep re-requests it).
    expect(fx.receiver.received.filter((r) => r.path === path)).toHaveLength(0);
    expect(second.result).toMatchObject({ state: "pending" });
    // (@inngest/test keeps step results across engines within a test, so the rest calls the domain step directly.)
    const db = await getDb();
    expect(await deliverOne(db, rows[1].id)).toMatchObject({ state: "pending", retryAt: expect.any(Date) });
    expect(await deliverOne(db, rows[0].id)).toMatchObject({ state: "delivered", status: 200 });
    expect(await deliverOne(db, rows[1].id)).toMatchObject({ state: "delivered", status: 200 });
    expect(fx.receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body).data.seq)).toEqual([1, 2]);
  });
});

describe("sweep-webhooks (Inngest function)", () => {
  it("fans out recorded events and requests their delivery", async () => {
    const api = await newTenant(fx.server.url);
    await api("PATCH", "/api/external/edit-webhooks", { channel_status_url: `${fx.receiver.url}/sweep` });
    const db = await getDb();
    await db.transaction((tx) =>
      recordMarkerEvent(
        tx,
        api.tenantId,
        "channel_status",
        { id_channel: "channel_y", name: "Y", status: "connected", previous_status: "connecting" },
        new Date(),
      ),
    );
    const t = new InngestTestEngine({ function: sweepWebhooks, steps: [{ id: "request", handler: () => ({ ids: [] }) }] });
    const { ctx } = await t.execute();
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, api.tenantId));
    expect(delivery).toMatchObject({ type: "channel_status", orderingKey: "channel_status:channel_y", state: "pending" });
    const [, events] = ctx.step.sendEvent.mock.calls[0] as [string, { name: string; data: unknown }[]];
    expect(events).toContainEqual({ name: "webhook/delivery.requested", data: { id_delivery: delivery.id, tenant_id: api.tenantId, queue: api.tenantId } });
  });
});
