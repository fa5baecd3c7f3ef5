/**
 * A job this process runs on a timer when no Inngest is configured (the channel state poll, the launches'
 * periodic pass, the hourly maintenance): the first run `firstRunMs` after start, then `intervalMs` after
 * the end of each run, never two at once. A failed run is logged and the next one is scheduled as usual.
 * Timers are unref'd (they never keep the process alive); stop() waits for a run in progress.
 */
export interface PeriodicJobOptions {
  /** What the log line of a failed run starts with, e.g. `[maintenance] retention failed`. */
  failure: string;
  intervalMs: number;
  /** Before the first run (default intervalMs). */
  firstRunMs?: number;
}

export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly job: (now: Date) => Promise<unknown>,
    private readonly opts: PeriodicJobOptions,
  ) {}

  start() {
    this.stopped = false;
    this.schedule(this.opts.firstRunMs ?? this.opts.intervalMs);
    return this;
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One run now (tests; the timer calls it too). */
  runOnce(now = new Date()) {
    this.running = this.job(now).catch((err) => console.error(this.opts.failure, err));
    return this.running;
  }

  private schedule(ms: number) {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      if (this.stopped) return;
      await this.runOnce();
      this.schedule(this.opts.intervalMs);
    }, ms);
    this.timer.unref?.();
  }
}
