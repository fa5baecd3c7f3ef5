import { runDueSeries } from "../../server/campaigns/run-due-series";
import { defineJob } from "./job";

/**
 * Repeating campaigns (server/campaigns/run-due-series.ts; docs/series.md): each series whose run is due gets its
 * campaign, once even with several processes; the new campaigns are handed to the dispatch engine. Every 15 s in
 * this process (the first pass 2 s after start, so a run missed while the server was down goes out at once), every
 * minute under Inngest.
 */
export const seriesRunsJob = defineJob({
  id: "series-runs",
  name: "Repeating campaigns: create the runs that are due",
  intervalMs: () => 15_000,
  firstRunMs: 2_000,
  failure: "[series] runs pass failed",
  run: async ({ services, now, step, wakeDispatch }) => {
    const pass = await step("runs", () => runDueSeries(services.db, now));
    return { ...pass, requested: pass.created.length > 0 ? await wakeDispatch() : 0 };
  },
});
