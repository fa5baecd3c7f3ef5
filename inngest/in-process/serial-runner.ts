/**
 * The scaffolding the pass-shaped embedded engines share (PassRunner, LaunchRunner, JobTimer): started, a wake subscription and one
 * unref'd timer; their work chained so it runs one piece at a time; stop() unsubscribes, clears the timer and waits for
 * the piece in progress. What a piece is, and when the next is due, stays the engine's.
 */
export class SerialRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private offWake: (() => void) | undefined;
  stopped = true;

  /** `subscribe`: to the engine's wake source (if it has one), answering the unsubscribe. */
  start(subscribe?: () => () => void) {
    this.stopped = false;
    this.offWake = subscribe?.();
  }

  async stop() {
    this.stopped = true;
    this.offWake?.();
    clearTimeout(this.timer);
    await this.running;
  }

  /** Runs `work` once what is running is done (it must not reject: engines catch and log their own failures). */
  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.running.then(work);
    this.running = run;
    return run;
  }

  /** Calls `tick` in `ms` (replacing the call pending), unless stopped then or now. */
  after(ms: number, tick: () => void | Promise<void>) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (!this.stopped) void tick();
    }, ms);
    this.timer.unref?.();
  }
}
