import type { Db } from "../db/client";
import { wakeDispatch } from "../server/dispatch/wake";
import { inngestConfigured } from "../server/env";
import { sweepNumberHealth } from "../server/numbers/sweep-health";
import type { Services } from "../server/services";
import { PeriodicJob } from "./periodic-job";

/**
 * One pass of the number health sweep (server/numbers/sweep-health.ts) and, when it made paused campaigns due,
 * a wake-up of the dispatch engine (the in-process runner puts them on its agenda; with Inngest the engine asks
 * for their runs). The embedded runner and the Inngest cron function both call this.
 */
export async function runNumberHealthSweep(db: Db, now: Date) {
  const result = await sweepNumberHealth(db, now);
  if (result.woken > 0) wakeDispatch();
  return result;
}

export interface NumberHealthRunnerOptions {
  /** Between two passes (default 30 s). */
  intervalMs?: number;
}

/** The in-process side of the number health sweep (no Inngest): every 30 s. */
export class NumberHealthRunner extends PeriodicJob {
  constructor(db: Db, opts: NumberHealthRunnerOptions = {}) {
    super((now) => runNumberHealthSweep(db, now), { intervalMs: opts.intervalMs ?? 30_000, failure: "[numbers] health sweep failed" });
  }
}

/** With Inngest configured the `number-health-sweep` cron function runs it (every minute); otherwise this process does. */
export function startNumberHealthSweep({ db }: Services, opts: NumberHealthRunnerOptions = {}): { kind: "inngest" | "in-process"; stop(): Promise<void> } {
  if (inngestConfigured()) return { kind: "inngest", stop: async () => {} };
  const runner = new NumberHealthRunner(db, opts).start();
  return { kind: "in-process", stop: () => runner.stop() };
}
