import { inngestConfigured } from "../server/env";
import { runFunnelJobs } from "../server/launches/funnel-jobs";
import type { Services } from "../server/services";

export interface LaunchFunnelRunnerOptions {
  /** Between two passes (default 5 s: a `members_changed` waits at most this beyond its minute). */
  intervalMs?: number;
}

/**
 * The launches' periodic work in this process (no Inngest): every few seconds, `members_changed`
 * reports and the invite links due a check (server/launches/funnel-jobs.ts). The timer is unref'd; stop()
 * waits for a pass in progress.
 */
export class LaunchFunnelRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly services: Services,
    private readonly intervalMs: number,
  ) {}

  start() {
    this.stopped = false;
    this.schedule();
    return this;
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass now (tests; the timer calls it too). */
  async runOnce(now = new Date()) {
    this.running = runFunnelJobs(this.services.db, this.services.provider, now).catch((err) => console.error("[launches] periodic pass failed", err));
    return this.running;
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      if (this.stopped) return;
      await this.runOnce();
      this.schedule();
    }, this.intervalMs);
    this.timer.unref?.();
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
