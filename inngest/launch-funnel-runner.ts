import { inngestConfigured } from "../server/env";
import { runFunnelJobs } from "../server/launches/funnel-jobs";
import type { Services } from "../server/services";
import { PeriodicJob } from "./periodic-job";

export interface LaunchFunnelRunnerOptions {
  /** Between two passes (default 5 s: a `members_changed` waits at most this beyond its minute). */
  intervalMs?: number;
}

/**
 * The launches' periodic work in this process (no Inngest): every few seconds, `members_changed`
 * reports and the invite links due a check (server/launches/funnel-jobs.ts).
 */
export class LaunchFunnelRunner extends PeriodicJob {
  constructor(services: Services, intervalMs: number) {
    super((now) => runFunnelJobs(services.db, services.provider, now), { intervalMs, failure: "[launches] periodic pass failed" });
  }
}

export interface LaunchFunnelEngine {
  kind: "inngest" | "in-process";
  stop(): Promise<void>;
}

/** With Inngest configured the `launch-funnel` cron function runs the passes; otherwise this process does. */
export function startLaunchFunnel(services: Services, opts: LaunchFunnelRunnerOptions = {}): LaunchFunnelEngine {
  if (inngestConfigured()) return { kind: "inngest", stop: async () => {} };
  const runner = new LaunchFunnelRunner(services, opts.intervalMs ?? 5_000).start();
  return { kind: "in-process", stop: () => runner.stop() };
}
