import { inBackground } from "../../db/client";
import { runLaunchEngine } from "../../server/launches/launch/launch-engine";
import { onLaunchWake } from "../../server/launches/launch/wake";
import type { Services } from "../../server/services";
import { SerialRunner } from "./serial-runner";

export interface LaunchRunnerOptions {
  /** Between two passes over every active launch (the engine's, inngest/engines/launches.ts). */
  intervalMs: number;
}

/**
 * The embedded launch engine (no Inngest): a pass over every active auto_create launch every `intervalMs`,
 * and a pass over one launch as soon as `wakeLaunch` names it (a launch created or edited, joins
 * recorded). Passes run one at a time; wake-ups arriving meanwhile are merged. The timer is unref'd;
 * stop() waits for the pass in progress.
 */
export class LaunchRunner {
  private readonly runner = new SerialRunner();
  private readonly woken = new Set<string>();

  constructor(
    private readonly services: Services,
    private readonly opts: LaunchRunnerOptions,
  ) {}

  start() {
    this.runner.start(() => onLaunchWake((launchId) => this.wake(launchId)));
    this.schedule();
    return this;
  }

  stop() {
    return this.runner.stop();
  }

  /** One pass over every launch now (the timer calls it; tests too). */
  pass() {
    return this.enqueue(undefined);
  }

  private wake(launchId: string) {
    if (this.runner.stopped || this.woken.has(launchId)) return;
    this.woken.add(launchId);
    void this.enqueue(launchId);
  }

  private enqueue(launchId: string | undefined) {
    return this.runner.run(async () => {
      if (launchId) this.woken.delete(launchId);
      if (this.runner.stopped && launchId) return;
      const { db, provider } = this.services;
      await inBackground(() => runLaunchEngine(db, provider, new Date(), launchId)).catch((err) => console.error("[launches] engine pass failed", err));
    });
  }

  private schedule() {
    this.runner.after(this.opts.intervalMs, async () => {
      await this.pass();
      this.schedule();
    });
  }
}
