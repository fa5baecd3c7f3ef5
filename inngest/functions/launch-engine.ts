import { runLaunchEngine } from "../../server/launches/launch-engine";
import { getServices } from "../../server/services";
import { inngest, launchWakeRequested } from "../client";

/**
 * The launch engine under Inngest (the embedded LaunchRunner does it without): every minute a pass over
 * every active auto_create launch, and a pass over one launch on `launch/wake.requested`. Creating a
 * group is one step per pass: a retried run re-reads the groups and creates only what is still missing.
 */
export const launchEngine = inngest.createFunction(
  {
    id: "launch-engine",
    name: "Launch engine (reserve groups)",
    triggers: [{ cron: "* * * * *" }, launchWakeRequested],
    concurrency: 1,
  },
  async ({ event, step }) =>
    step.run("create-due-groups", async () => {
      const { db, provider } = await getServices();
      const launchId = (event.data as { id_launch?: string } | undefined)?.id_launch;
      return { created: await runLaunchEngine(db, provider, new Date(), launchId) };
    }),
);
