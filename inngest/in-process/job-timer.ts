/**
 * The in-process provider of the periodic jobs (no Inngest configured): each job on an unref'd timer, the first
 * run `firstRunMs` after start, then `intervalMs` after the end of each run, never two at once. A failed run is
 * logged and the next one scheduled as usual; stop() waits for a run in progress. inngest/start.ts starts them.
 */
import { inBackground } from "../../db/client";
import { wakeDispatch } from "../../server/dispatch/wake";
import type { Services } from "../../server/services";
import type { JobContext, PeriodicJobDefinition } from "../jobs/job";
import { SerialRunner } from "./serial-runner";

/** The in-process context: steps are plain calls; a dispatch wake-up is the runner's. */
export function inProcessContext(services: Services, now: Date): JobContext {
  return {
    services,
    now,
    step: (_name, fn) => fn(),
    wakeDispatch: async () => {
      wakeDispatch();
      return 0;
    },
  };
}

export interface JobTimerOptions {
  /** Replaces the job's own interval (tests). */
  intervalMs?: number;
  /** Replaces the job's own delay before the first run (tests). */
  firstRunMs?: number;
}

export class JobTimer {
  private readonly runner = new SerialRunner();
  private readonly intervalMs: number;
  private readonly firstRunMs: number;

  constructor(
    private readonly job: PeriodicJobDefinition,
    private readonly services: Services,
    opts: JobTimerOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? job.intervalMs();
    this.firstRunMs = opts.firstRunMs ?? job.firstRunMs ?? this.intervalMs;
  }

  start() {
    this.runner.start();
    this.schedule(this.firstRunMs);
    return this;
  }

  stop() {
    return this.runner.stop();
  }

  /** One run now (tests; the timer calls it too), after the one in progress. */
  runOnce(now = new Date()) {
    return this.runner.run(() => inBackground(() => this.job.run(inProcessContext(this.services, now))).catch((err) => console.error(this.job.failure, err)));
  }

  private schedule(ms: number) {
    this.runner.after(ms, async () => {
      await this.runOnce();
      this.schedule(this.intervalMs);
    });
  }
}
