import { eq } from "drizzle-orm";
import { afterEach, expect, it, vi } from "vitest";
import { getDb } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { getServices } from "../../server/services";
import { inngestEnv, newTenant, restoreInngestEnvAfterEach } from "../../test/helpers";
import { withServerAndReceiver } from "../../test/webhooks/fixtures";
import { inngest } from "../client";
import { type Started as WebhookEngine, startWebhookEngine } from "../start";

const fx = withServerAndReceiver();
let engine: WebhookEngine | undefined;
restoreInngestEnvAfterEach();

afterEach(async () => {
  await engine?.stop();
  engine = undefined;
  vi.restoreAllMocks();
});

it("with Inngest configured, a recorded event becomes a delivery and a webhook/delivery.requested event keyed by tenant", async () => {
  process.env.INNGEST_EVENT_KEY = "test-event-key";
  const send = vi.spyOn(inngest, "send").mockResolvedValue({ ids: ["evt"] });
  engine = startWebhookEngine(await getServices());
  expect(engine.kind).toBe("inngest");

  const api = await newTenant(fx.server.url);
  await api("PATCH", "/api/external/edit-webhooks", { channel_status_url: `${fx.receiver.url}/engine` });
  // A real channel_status: the simulator pairs a new channel (connecting → connected).
  expect((await api("POST", "/api/external/create-channel", { name: "Canal" })).status).toBe(201);

  const db = await getDb();
  const delivery = await vi.waitFor(
    async () => {
      const [d] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, api.tenantId));
      expect(d).toBeDefined();
      return d;
    },
    { timeout: 10_000, interval: 50 },
  );
  await vi.waitFor(() =>
    expect(send).toHaveBeenCalledWith([
      { name: "webhook/delivery.requested", data: { id_delivery: delivery.id, tenant_id: api.tenantId, queue: api.tenantId } },
    ]),
  );
  // Inngest delivers it, not this process.
  expect(fx.receiver.received.filter((r) => r.path === "/engine")).toHaveLength(0);
});

it("without Inngest, the in-process runner is selected (test/webhooks/delivery.test.ts drives it)", async () => {
  for (const k of inngestEnv) delete process.env[k];
  const send = vi.spyOn(inngest, "send");
  engine = startWebhookEngine(await getServices());
  expect(engine.kind).toBe("in-process");
  // Stopped before its first look: this test is only about which engine is chosen.
  await engine.stop();
  engine = undefined;
  expect(send).not.toHaveBeenCalled();
});
