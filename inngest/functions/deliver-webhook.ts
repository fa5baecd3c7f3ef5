import { deliverOne } from "../../server/webhooks/deliver-webhooks";
import { getServices } from "../../server/services";
import { inngest, webhookDeliveryRequested } from "../client";

/** Attempts (with their sleeps) one run takes; the schedule has 9 attempts, blocked waits add a few. */
const maxLoops = 60;

/**
 * The Inngest engine for one webhook delivery: a thin loop around the domain step deliverOne (the same
 * attemptDelivery the in-process runner uses). The domain decides whether the attempt may go now
 * (due, not held, first of its campaign) and when to look again; this only sleeps until then.
 */
export const deliverWebhook = inngest.createFunction(
  {
    id: "deliver-webhook",
    name: "Deliver a webhook",
    triggers: [webhookDeliveryRequested],
    // A tenant's slow receiver uses only that tenant's slots (its partner apps' copies have slots of their
    // own: see webhookDeliveryEvents); other tenants' deliveries go on.
    concurrency: [{ key: "event.data.queue", limit: 8 }],
    // deliverOne records every attempt itself and never throws on an HTTP failure; a thrown database
    // error is retried by Inngest, and the lease keeps two runs from sending the same delivery at once.
  },
  async ({ event, step }) => {
    const id = event.data.id_delivery;
    for (let n = 1; n <= maxLoops; n++) {
      const outcome = await step.run(`attempt-${n}`, async () => {
        const o = await deliverOne((await getServices()).db, id);
        return { state: o.state, status: o.status, retryAt: o.retryAt?.toISOString() ?? null };
      });
      if (outcome.state !== "pending" || !outcome.retryAt) return { id_delivery: id, state: outcome.state, status: outcome.status };
      await step.sleepUntil(`wait-${n}`, new Date(outcome.retryAt));
    }
    // Still pending after many looks (held behind an earlier event): the sweep requests it again.
    return { id_delivery: id, state: "pending" };
  },
);
