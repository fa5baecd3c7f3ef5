import { runFunnelJobs } from "../../server/launches/funnel-jobs";
import { getServices } from "../../server/services";
import { inngest } from "../client";

/**
 * The launches' periodic work under Inngest (the embedded LaunchFunnelRunner does it without): every
 * minute, `members_changed` reports (at most one per group per minute) and the invite links due a check.
 */
export const launchFunnel = inngest.createFunction(
  { id: "launch-funnel", name: "Launches: members reports and invite link checks", triggers: [{ cron: "* * * * *" }], concurrency: 1 },
  async ({ step }) =>
    step.run("funnel-jobs", async () => {
      const { db, provider } = await getServices();
      return runFunnelJobs(db, provider, new Date());
    }),
);
