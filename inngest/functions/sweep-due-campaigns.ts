import { dueCampaigns } from "../../server/dispatch/due-campaigns";
import { getServices } from "../../server/services";
import { dispatchRequests, inngest, sweepEveryMs } from "../client";
import { cronEvery } from "../jobs/job";

/** A live run calls its step within moments of the due time; a campaign overdue longer has no run driving it. */
export const overdueMs = 60_000;
const sweepLimit = 500;

/**
 * Safety net for wake-ups lost while Inngest was unreachable (or runs that ran out of retries):
 * every minute, request a dispatch run for each campaign whose next step is overdue and unleased.
 * `clock` is for tests; the served function uses the real time.
 */
export function createSweepDueCampaigns({ clock = () => new Date() }: { clock?: () => Date } = {}) {
  return inngest.createFunction(
    { id: "sweep-due-campaigns", name: "Sweep due campaigns", triggers: [{ cron: cronEvery(sweepEveryMs) }], concurrency: 1 },
    async ({ step }) => {
      const events = await step.run("find-due", async () => {
        const { db } = await getServices();
        return dispatchRequests(db, await dueCampaigns(db, new Date(clock().getTime() - overdueMs), sweepLimit));
      });
      if (events.length > 0) await step.sendEvent("request-dispatch", events);
      return { requested: events.length };
    },
  );
}

export const sweepDueCampaigns = createSweepDueCampaigns();
