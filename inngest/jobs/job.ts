/**
 * A background job defined once (docs/architecture.md#background-jobs): what it does and how often. Two providers
 * run the definitions, picked in one place (inngest/start.ts): this process's timers when no Inngest is configured
 * (inngest/in-process/job-timer.ts), and Inngest cron functions generated from them (inngest/functions/periodic-job.ts).
 * Adding a periodic job is one file in inngest/jobs/ and one line in index.ts; an event-driven engine is the same in
 * inngest/engines/ (engine.ts).
 */
import type { Services } from "../../server/services";

/** What a run gets from the provider that runs it. */
export interface JobContext {
  services: Services;
  /** The run's time (the provider's clock; tests pass one). */
  now: Date;
  /**
   * A named piece of the run: a memoised, retried step under Inngest (step.run), called straight in this
   * process. Its result must be JSON (Inngest stores it).
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * The run made campaigns due: the dispatch engine should look now. In this process, a wake-up of the runner;
   * under Inngest, `campaign/dispatch.requested` events for the due campaigns. Answers the events sent (0 in process).
   */
  wakeDispatch(): Promise<number>;
}

export interface PeriodicJobDefinition<R = unknown> {
  /** The Inngest function's id (also the job's name in logs). */
  id: string;
  /** The Inngest function's readable name. */
  name: string;
  /**
   * Between two runs in this process (after the end of the previous one). Inngest runs the job on the cron
   * cronEvery derives from it: every minute at most, Inngest's finest schedule.
   */
  intervalMs(): number;
  /** Before the first run in this process (default intervalMs()). */
  firstRunMs?: number;
  /** Whether the job has anything to do with these services (the state poll: only a provider that can poll); default yes. */
  appliesTo?(services: Services): boolean;
  /** What the log line of a failed run starts with, e.g. `[maintenance] retention failed`. */
  failure: string;
  run(ctx: JobContext): Promise<R>;
}

export const defineJob = <R>(job: PeriodicJobDefinition<R>) => job;

const minute = 60_000;
const hour = 60 * minute;

/**
 * The cron expression for "every `ms`": every minute under a minute (Inngest's cron has no seconds), every n
 * minutes up to an hour, every n hours from there (on the hour), rounded to a whole minute or hour.
 */
export function cronEvery(ms: number): string {
  if (ms <= minute) return "* * * * *";
  if (ms < hour) {
    const m = Math.round(ms / minute);
    return m >= 60 ? "0 * * * *" : `*/${m} * * * *`;
  }
  const h = Math.min(24, Math.round(ms / hour));
  return h === 1 ? "0 * * * *" : h === 24 ? "0 0 * * *" : `0 */${h} * * *`;
}
