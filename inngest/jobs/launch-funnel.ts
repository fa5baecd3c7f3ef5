import { runFunnelJobs } from "../../server/launches/funnel-jobs";
import { defineJob } from "./job";

/**
 * The launches' periodic work (server/launches/funnel-jobs.ts): `members_changed` reports (at most one per group
 * per minute) and the invite links due a check. Every 5 s in this process (a report waits at most that beyond its
 * minute), every minute under Inngest.
 */
export const launchFunnelJob = defineJob({
  id: "launch-funnel",
  name: "Launches: members reports and invite link checks",
  intervalMs: () => 5_000,
  failure: "[launches] periodic pass failed",
  run: ({ services, now, step }) => step("funnel-jobs", () => runFunnelJobs(services.db, services.provider, now)),
});
