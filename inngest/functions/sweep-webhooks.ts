import { overdueDeliveries } from "../../server/webhooks/deliver-webhooks";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { pruneWebhookHistory } from "../../server/webhooks/prune-history";
import { getServices } from "../../server/services";
import { inngest, webhookDeliveryEvents } from "../client";

/**
 * Every minute: turns outbox events nobody fanned out into deliveries (e.g. recorded by another process
 * while Inngest was unreachable) and re-requests deliveries that are overdue and held by no one; once an
 * hour, applies the retention of delivery history.
 */
export const sweepWebhooks = inngest.createFunction(
  { id: "sweep-webhooks", name: "Sweep webhook deliveries", triggers: [{ cron: "* * * * *" }] },
  async ({ step }) => {
    const found = await step.run("find", async () => {
      const { db } = await getServices();
      const now = new Date();
      const created = await fanOutEvents(db, now);
      const overdue = await overdueDeliveries(db, now);
      // Decided inside the step, so a replay takes the same path.
      return { events: webhookDeliveryEvents([...created, ...overdue]), prune: now.getUTCMinutes() === 0 };
    });
    const requested = found.events;
    if (requested.length > 0) await step.sendEvent("request", requested);
    // Retention once an hour (WEBHOOK_RETENTION_DAYS).
    if (found.prune) {
      await step.run("prune", async () => pruneWebhookHistory((await getServices()).db, new Date()));
    }
    return { requested: requested.length };
  },
);
