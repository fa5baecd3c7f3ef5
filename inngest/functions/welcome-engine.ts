import { runWelcomes } from "../../server/launches/funnel/run-welcomes";
import { getServices } from "../../server/services";
import { inngest, launchWakeRequested } from "../client";
import { cronEvery } from "../jobs/job";

/**
 * The welcome engine under Inngest (the embedded WelcomeRunner does it without): a pass over every launch's welcomes on
 * the cron of the engine's interval (inngest/engines/welcomes.ts), and over one launch on `launch/wake.requested` (its
 * joins recorded). One step per pass: a batch is claimed and recorded in the database, so a retried step looks up what
 * it finds being sent instead of sending it again.
 */
export function createWelcomeEngine(passEveryMs: number) {
  return inngest.createFunction(
    {
      id: "welcome-engine",
      name: "Launch welcomes (greet each group's newcomers)",
      triggers: [{ cron: cronEvery(passEveryMs) }, launchWakeRequested],
      concurrency: 1,
    },
    async ({ event, step }) =>
      step.run("welcome-newcomers", async () => {
        const { db, provider } = await getServices();
        const launchId = (event.data as { id_launch?: string } | undefined)?.id_launch;
        return runWelcomes(db, provider, new Date(), launchId);
      }),
  );
}
