import { dueCampaigns, nextDueAt } from "../server/dispatch/due-campaigns";
import { runCampaignStep, type DispatchDeps } from "../server/dispatch/run-campaign-step";
import { onDispatchWake } from "../server/dispatch/wake";
import { mapLimit } from "../server/map-limit";

export interface RunnerOptions {
  /** Campaign steps run at once. */
  concurrency?: number;
  /** Longest sleep between two looks at the database. */
  maxSleepMs?: number;
}

/**
 * The in-process engine, used when no Inngest is configured: it runs the same domain step
 * (runCampaignStep) as the Inngest function, for every due campaign, sleeping until the next is due.
 * Durable state lives in the database, so a restart picks up where it stopped; campaign leases make
 * a second runner (another process, or Inngest) harmless.
 */
export class InProcessRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;
  private idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: DispatchDeps,
    private readonly opts: RunnerOptions = {},
  ) {}

  start() {
    this.stopped = false;
    this.unsubscribe = onDispatchWake(() => this.wake());
    this.wake();
    return this;
  }

  async stop() {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.idle;
  }

  wake() {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref?.();
  }

  private async tick() {
    if (this.running || this.stopped) return;
    this.running = true;
    let resolveIdle!: () => void;
    this.idle = new Promise((r) => (resolveIdle = r));
    let busy = false;
    try {
      const now = new Date();
      const due = await dueCampaigns(this.deps.db, now, 32);
      busy = due.length > 0;
      await mapLimit(due, this.opts.concurrency ?? 4, (id) =>
        runCampaignStep(this.deps, id).catch((err) => console.error("[dispatch] step failed", id, err)),
      );
    } catch (err) {
      console.error("[dispatch] runner tick failed", err);
    } finally {
      this.running = false;
      resolveIdle();
    }
    if (this.stopped) return;
    if (busy || this.again) {
      this.again = false;
      return this.schedule(0);
    }
    const next = await nextDueAt(this.deps.db).catch(() => null);
    const max = this.opts.maxSleepMs ?? 1000;
    this.schedule(next ? Math.min(max, Math.max(0, next.getTime() - Date.now())) : max);
  }
}
