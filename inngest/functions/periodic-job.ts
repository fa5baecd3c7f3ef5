/**
 * The Inngest provider of the periodic jobs: one cron function per definition (served at /api/inngest with the
 * event-driven functions, inngest/served.ts), concurrency 1, on the cron derived from its interval.
 */
import { dueCampaigns } from "../../server/dispatch/due-campaigns";
import { getServices } from "../../server/services";
import { dispatchRequests, inngest } from "../client";
import { cronEvery, type PeriodicJobDefinition } from "../jobs/job";

/** `clock` is for tests; the served function uses the real time. */
export function inngestFunctionOf(job: PeriodicJobDefinition, { clock = () => new Date() }: { clock?: () => Date } = {}) {
  return inngest.createFunction({ id: job.id, name: job.name, triggers: [{ cron: cronEvery(job.intervalMs()) }], concurrency: 1 }, async ({ step }) => {
    const now = clock();
    const services = await getServices();
    return job.run({
      services,
      now,
      step: (name, fn) => step.run(name, fn) as Promise<Awaited<ReturnType<typeof fn>>>,
      wakeDispatch: async () => {
        const events = await step.run("find-due", async () => dispatchRequests(services.db, await dueCampaigns(services.db, now, 500)));
        if (events.length > 0) await step.sendEvent("request-dispatch", events);
        return events.length;
      },
    });
  });
}
