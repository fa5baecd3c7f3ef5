import { runFunnelJobs } from "../../server/launches/funnel/funnel-jobs";
import { reportModeration } from "../../server/moderation/report-moderation";
import { defineJob } from "./job";

/**
 * The launches' periodic work (server/launches/funnel/funnel-jobs.ts): `members_changed` reports (at most one per group
 * per minute), the invite links due a check, and moderation's `moderation` events (at most one a minute per group). Every 5 s in this process (a report waits at most that beyond its
 * minute), every minute under Inngest.
 */
export const launchFunnelJob = defineJob({
  id: "launch-funnel",
  name: "Launches: members reports and invite link checks",
  intervalMs: () => 5_000,
  failure: "[launches] periodic pass failed",
  run: async ({ services, now, step }) => {
    await step("funnel-jobs", () => runFunnelJobs(services.db, services.provider, now));
    await step("moderation-reports", () => reportModeration(services.db, now));
  },
});
