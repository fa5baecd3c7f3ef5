/**
 * An embedded engine made of passes (no Inngest): a pass every `intervalMs`, at once again while a pass left work (each
 * pass is bounded; what it left is the next pass's), and at once when the engine's wake source calls. Passes run one at a
 * time; wake-ups arriving meanwhile are merged into one. The timer is unref'd; stop() waits for the pass in progress.
 * The group-action runner and the welcome runner are two of it.
 */
import { inBackground } from "../../db/client";
import { SerialRunner } from "./serial-runner";

export interface PassEngine {
  /** Names the engine in logs: `[label] engine pass failed`. */
  label: string;
  /** One pass; answers whether work is left now. `stopping`: true once the runner is stopping (a pass may end early). */
  pass(stopping: () => boolean): Promise<boolean>;
  /** Subscribes to the engine's wake source; answers the unsubscribe. */
  onWake(wake: () => void): () => void;
}

export class PassRunner {
  private readonly runner = new SerialRunner();
  private queued = false;

  constructor(
    private readonly engine: PassEngine,
    private readonly intervalMs: number,
  ) {}

  start() {
    this.runner.start(() => this.engine.onWake(() => this.soon(0)));
    this.soon(this.intervalMs);
    return this;
  }

  stop() {
    return this.runner.stop();
  }

  /** One pass now (tests too); answers whether work is left. */
  pass(): Promise<boolean> {
    return this.runner.run(() =>
      inBackground(() => this.engine.pass(() => this.runner.stopped)).catch((err) => {
        console.error(`[${this.engine.label}] engine pass failed`, err);
        return false;
      }),
    );
  }

  private soon(ms: number) {
    if (this.runner.stopped || (ms === 0 && this.queued)) return;
    this.queued = ms === 0;
    this.runner.after(ms, async () => {
      this.queued = false;
      const more = await this.pass();
      this.soon(more ? 0 : this.intervalMs);
    });
  }
}
