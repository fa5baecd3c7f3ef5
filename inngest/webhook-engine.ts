import { inngestConfigured } from "../server/env";
import type { Services } from "../server/services";
import { fanOutEvents } from "../server/webhooks/fan-out-events";
import { onWebhookWake } from "../server/webhooks/wake";
import { inngest, webhookDeliveryEvents } from "./client";
import { WebhookRunner } from "./webhook-runner";

export interface WebhookEngine {
  kind: "inngest" | "in-process";
  stop(): Promise<void>;
}

/**
 * Picks the engine that delivers webhooks, like dispatch (docs/decisions.md#running-the-service): Inngest when configured
 * (one `deliver-webhook` run per delivery), else the in-process WebhookRunner. Same domain steps.
 */
export function startWebhookEngine({ db }: Services): WebhookEngine {
  if (!inngestConfigured()) {
    const runner = new WebhookRunner(db).start();
    return { kind: "in-process", stop: () => runner.stop() };
  }
  let timer: NodeJS.Timeout | undefined;
  let lateTimer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const fanOut = () => {
    inFlight = inFlight
      .then(async () => {
        const created = await fanOutEvents(db, new Date());
        if (created.length > 0) await inngest.send(webhookDeliveryEvents(created));
      })
      // Not lost: the sweep-webhooks cron fans out what is left and re-requests overdue deliveries.
      .catch((err) => console.error("[webhooks] could not request deliveries from Inngest", err));
  };
  // The wake comes from inside the event's transaction: look just after it commits, and once more a
  // little later for a slow commit (the sweep-webhooks cron catches anything still left).
  const off = onWebhookWake(() => {
    clearTimeout(timer);
    clearTimeout(lateTimer);
    timer = setTimeout(fanOut, 5);
    lateTimer = setTimeout(fanOut, 500);
  });
  return {
    kind: "inngest",
    async stop() {
      off();
      clearTimeout(timer);
      clearTimeout(lateTimer);
      await inFlight;
    },
  };
}
