import { runGroupActions } from "../../server/groups/run-group-actions";
import { onGroupActionWake } from "../../server/groups/wake";
import type { Services } from "../../server/services";

export interface GroupActionRunnerOptions {
  /** Between two passes over the due group actions when the last one left nothing to do now (inngest/engines/group-actions.ts). */
  intervalMs: number;
}

/**
 * The embedded group-action engine (no Inngest): a pass over the due actions every `intervalMs`, at once again while a
 * pass left work (an action's pass is bounded; its next groups are the next pass's), and at once when `wakeGroupAction`
 * names an action (created). Passes run one at a time; the timer is unref'd; stop() waits for the pass in progress.
 */
export class GroupActionRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private offWake: (() => void) | undefined;
  private queued = false;

  constructor(
    private readonly services: Services,
    private readonly opts: GroupActionRunnerOptions,
  ) {}

  start() {
    this.stopped = false;
    this.offWake = onGroupActionWake(() => this.soon(0));
    this.soon(this.opts.intervalMs);
    return this;
  }

  async stop() {
    this.stopped = true;
    this.offWake?.();
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass now (tests too); answers whether work is left. */
  pass(): Promise<boolean> {
    const run = this.running.then(async () => {
      const { db, provider } = this.services;
      const r = await runGroupActions(db, provider, new Date(), undefined, { stopping: () => this.stopped }).catch((err) => {
        console.error("[group-actions] engine pass failed", err);
        return { more: false };
      });
      return r.more;
    });
    this.running = run;
    return run;
  }

  private soon(ms: number) {
    if (this.stopped) return;
    if (ms === 0 && this.queued) return;
    clearTimeout(this.timer);
    this.queued = ms === 0;
    this.timer = setTimeout(async () => {
      this.queued = false;
      if (this.stopped) return;
      const more = await this.pass();
      this.soon(more ? 0 : this.opts.intervalMs);
    }, ms);
    this.timer.unref?.();
  }
}
