import { dueCampaigns } from "../../server/dispatch/due-campaigns";
import { sweepNumberHealth } from "../../server/numbers/sweep-health";
import { getServices } from "../../server/services";
import { dispatchRequests, inngest } from "../client";

/**
 * The number health sweep under Inngest (the embedded NumberHealthRunner does it every 30 s without): every
 * minute, server/numbers/sweep-health.ts; the campaigns it made due get their dispatch runs requested.
 * `clock` is for tests; the served function uses the real time.
 */
export function createNumberHealthSweep({ clock = () => new Date() }: { clock?: () => Date } = {}) {
  return inngest.createFunction(
    { id: "number-health-sweep", name: "Number health sweep (cool-downs, caps, warm-up)", triggers: [{ cron: "* * * * *" }], concurrency: 1 },
    async ({ step }) => {
      const now = clock();
      const result = await step.run("sweep", async () => sweepNumberHealth((await getServices()).db, now));
      if (result.woken === 0) return { ...result, requested: 0 };
      const events = await step.run("find-due", async () => {
        const { db } = await getServices();
        return dispatchRequests(db, await dueCampaigns(db, now, 500));
      });
      if (events.length > 0) await step.sendEvent("request-dispatch", events);
      return { ...result, requested: events.length };
    },
  );
}

export const numberHealthSweep = createNumberHealthSweep();
