import { sweepNumberHealth } from "../../server/numbers/sweep-health";
import { defineJob } from "./job";

/**
 * The number health sweep (server/numbers/sweep-health.ts; docs/numbers.md#the-health-sweep): cool-downs and
 * caps that ended, warm-up days; the campaigns it made due are handed to the dispatch engine. Every 30 s in this
 * process, every minute under Inngest.
 */
export const numberHealthSweepJob = defineJob({
  id: "number-health-sweep",
  name: "Number health sweep (cool-downs, caps, warm-up)",
  intervalMs: () => 30_000,
  failure: "[numbers] health sweep failed",
  run: async ({ services, now, step, wakeDispatch }) => {
    const result = await step("sweep", () => sweepNumberHealth(services.db, now));
    return { ...result, requested: result.woken > 0 ? await wakeDispatch() : 0 };
  },
});
