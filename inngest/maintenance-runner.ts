import type { Db } from "../db/client";
import { inngestConfigured } from "../server/env";
import { runMaintenanceAndLog } from "../server/maintenance/purge-expired";
import type { Services } from "../server/services";
import { PeriodicJob } from "./periodic-job";

export interface MaintenanceRunnerOptions {
  /** Delay before the first run after start (default one minute: the server settles first). */
  firstRunMs?: number;
  /** Between two runs (default one hour). */
  intervalMs?: number;
  /** The job (tests replace it; default runMaintenanceAndLog). */
  job?: (db: Db, now: Date) => Promise<unknown>;
}

/** The in-process side of the one maintenance job (no Inngest): runMaintenance a minute after start, then hourly. */
export class MaintenanceRunner extends PeriodicJob {
  constructor(db: Db, opts: MaintenanceRunnerOptions = {}) {
    const job = opts.job ?? runMaintenanceAndLog;
    super((now) => job(db, now), {
      intervalMs: opts.intervalMs ?? 3_600_000,
      firstRunMs: opts.firstRunMs ?? 60_000,
      failure: "[maintenance] retention failed",
    });
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
