import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { onWebhookWake } from "../../server/webhooks/wake";
import { inngest, webhookDeliveryEvents } from "../client";
import { deliverWebhook } from "../functions/deliver-webhook";
import { sweepWebhooks } from "../functions/sweep-webhooks";
import { WebhookRunner } from "../in-process/webhook-runner";
import { defineEngine } from "./engine";

/**
 * Webhook delivery, like dispatch (docs/decisions.md#running-the-service): the in-process WebhookRunner, or one
 * `deliver-webhook` run per delivery under Inngest. Same domain steps; `sweep-webhooks` fans out what is left.
 */
export const webhooksEngine = defineEngine({
  id: "webhooks",
  inProcess: ({ db }) => new WebhookRunner(db).start(),
  forward: ({ db }, forwarder) => {
    let timer: NodeJS.Timeout | undefined;
    let lateTimer: NodeJS.Timeout | undefined;
    // One fan-out at a time, in order.
    let chain: Promise<void> = Promise.resolve();
    const fanOut = () => {
      chain = forwarder.track(
        "webhook/delivery.requested",
        chain.then(async () => {
          const created = await fanOutEvents(db, new Date());
          if (created.length > 0) await inngest.send(webhookDeliveryEvents(created));
        }),
      );
    };
    // The wake comes from inside the event's transaction: look just after it commits, and once more a
    // little later for a slow commit (the sweep-webhooks cron catches anything still left).
    const off = onWebhookWake(() => {
      clearTimeout(timer);
      clearTimeout(lateTimer);
      timer = setTimeout(fanOut, 5);
      lateTimer = setTimeout(fanOut, 500);
    });
    return () => {
      off();
      clearTimeout(timer);
      clearTimeout(lateTimer);
    };
  },
  functions: [deliverWebhook, sweepWebhooks],
});
