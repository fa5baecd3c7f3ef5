/**
 * The loop both in-process engines share (dispatch and webhooks): one round at a time; a wake-up
 * during a round asks for another right after it; otherwise sleep until the next thing is due. The
 * engines supply what a round does and how long to sleep; durable state stays in the database.
 */
import { inBackground } from "../../db/client";
export abstract class WakeableLoop {
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;
  private tickDone: Promise<void> = Promise.resolve();

  protected constructor(private readonly label: string) {}

  /** Subscribe to the engine's wake-ups; returns the unsubscribe. */
  protected abstract subscribe(): () => void;
  /** One round of work; true when more is ready right away. */
  protected abstract round(): Promise<boolean>;
  /** How long to sleep after a round that left nothing ready. */
  protected abstract sleepMs(): Promise<number>;
  /** Work a round started that stop() must wait for (beyond the round itself). */
  protected async drain(): Promise<void> {}

  start() {
    this.stopped = false;
    this.unsubscribe = this.subscribe();
    this.wake();
    return this;
  }

  async stop() {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.tickDone;
    await this.drain();
  }

  get isStopped() {
    return this.stopped;
  }

  wake(delayMs = 0) {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(delayMs);
  }

  private schedule(ms: number) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref?.();
  }

  private async tick() {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    let resolve!: () => void;
    this.tickDone = new Promise((r) => (resolve = r));
    let delay = 0;
    try {
      // Its statements, and those of the work it starts, go after requests' on embedded PGlite (db/connection-priority.ts).
      const more = await inBackground(() => this.round());
      // Still "ticking" while the sleep is worked out, so a wake-up meanwhile is not overwritten by it.
      if (!more && !this.again && !this.stopped) delay = await this.sleepMs();
    } catch (err) {
      if (!this.stopped) console.error(`[${this.label}] runner round failed`, err);
      delay = 1000;
    } finally {
      this.ticking = false;
      resolve();
    }
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      delay = 0;
    }
    this.schedule(delay);
  }
}
