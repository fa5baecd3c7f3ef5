import type { Db } from "../db/client";
import { inngestConfigured } from "../server/env";
import { runMaintenanceAndLog } from "../server/maintenance/purge-expired";
import type { Services } from "../server/services";

export interface MaintenanceRunnerOptions {
  /** Delay before the first run after start (default one minute: the server settles first). */
  firstRunMs?: number;
  /** Between two runs (default one hour). */
  intervalMs?: number;
  /** The job (tests replace it; default runMaintenanceAndLog). */
  job?: (db: Db, now: Date) => Promise<unknown>;
}

/**
 * The in-process side of the one maintenance job (no Inngest): runMaintenance a minute after start,
 * then hourly. Timers are unref'd (they never keep the process alive); stop() waits for a run in progress.
 */
export class MaintenanceRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly db: Db,
    private readonly opts: MaintenanceRunnerOptions = {},
  ) {}

  start() {
    this.stopped = false;
    this.schedule(this.opts.firstRunMs ?? 60_000);
    return this;
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number) {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.run(), ms);
    this.timer.unref?.();
  }

  private async run() {
    if (this.stopped) return;
    this.running = (this.opts.job ?? runMaintenanceAndLog)(this.db, new Date()).catch((err) => console.error("[maintenance] retention failed", err));
    await this.running;
    this.schedule(this.opts.intervalMs ?? 3_600_000);
  }
}

export interface MaintenanceEngine {
  kind: "inngest" | "in-process";
  stop(): Promise<void>;
}

/** With Inngest configured the `maintenance` cron function runs the job; otherwise this process does. */
export function startMaintenance({ db }: Services, opts: MaintenanceRunnerOptions = {}): MaintenanceEngine {
  if (inngestConfigured()) return { kind: "inngest", stop: async () => {} };
  const runner = new MaintenanceRunner(db, opts).start();
  return { kind: "in-process", stop: () => runner.stop() };
}
