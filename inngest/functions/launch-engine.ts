import { runLaunchEngine } from "../../server/launches/launch/launch-engine";
import { getServices } from "../../server/services";
import { inngest, launchWakeRequested } from "../client";
import { cronEvery } from "../jobs/job";

/**
 * The launch engine under Inngest (the embedded LaunchRunner does it without): a pass over every active auto_create
 * launch on the cron of the engine's interval (inngest/engines/launches.ts), and a pass over one launch on
 * `launch/wake.requested`. Creating a group is one step per pass: a retried run re-reads the groups and creates only
 * what is still missing.
 */
export function createLaunchEngine(passEveryMs: number) {
  return inngest.createFunction(
    {
      id: "launch-engine",
      name: "Launch engine (reserve groups)",
      triggers: [{ cron: cronEvery(passEveryMs) }, launchWakeRequested],
      concurrency: 1,
    },
    async ({ event, step }) =>
      step.run("create-due-groups", async () => {
        const { db, provider } = await getServices();
        const launchId = (event.data as { id_launch?: string } | undefined)?.id_launch;
        return { created: await runLaunchEngine(db, provider, new Date(), launchId) };
      }),
  );
}
