import { overdueDeliveries } from "../../server/webhooks/deliver-webhooks";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { getServices } from "../../server/services";
import { inngest, sweepEveryMs, webhookDeliveryEvents } from "../client";
import { cronEvery } from "../jobs/job";

/**
 * Every minute (sweepEveryMs): turns outbox events nobody fanned out into deliveries (e.g. recorded by another process
 * while Inngest was unreachable) and re-requests deliveries that are overdue and held by no one. (The
 * retention of delivery history is the hourly `maintenance` function's job.)
 */
export const sweepWebhooks = inngest.createFunction(
  { id: "sweep-webhooks", name: "Sweep webhook deliveries", triggers: [{ cron: cronEvery(sweepEveryMs) }] },
  async ({ step }) => {
    const requested = await step.run("find", async () => {
      const { db } = await getServices();
      const now = new Date();
      const created = await fanOutEvents(db, now);
      const overdue = await overdueDeliveries(db, now);
      return webhookDeliveryEvents([...created, ...overdue]);
    });
    if (requested.length > 0) await step.sendEvent("request", requested);
    return { requested: requested.length };
  },
);
