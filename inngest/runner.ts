import { dueCampaigns, nextDueAt } from "../server/dispatch/due-campaigns";
import { runCampaignStep, type DispatchDeps } from "../server/dispatch/run-campaign-step";
import { onDispatchWake } from "../server/dispatch/wake";
import { WakeableLoop } from "./wakeable-loop";

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
export class InProcessRunner extends WakeableLoop {
  constructor(
    private readonly deps: DispatchDeps,
    private readonly opts: RunnerOptions = {},
  ) {
    super("dispatch");
  }

  protected subscribe() {
    return onDispatchWake(() => this.wake());
  }

  /** Campaigns whose step runs now in this process, and those steps (stop() waits for them). */
  private readonly running = new Map<string, Promise<void>>();

  private get workers() {
    return this.opts.concurrency ?? 4;
  }

  /**
   * A pool: each free worker takes the next due campaign (round-robin across tenants, dueCampaigns) as
   * soon as it is free, and a finished step wakes the loop. A long step (a zero-pacing campaign's loop
   * of 100 sends) holds one worker, not the others: paced campaigns of other tenants keep their pace
   * beside it (docs/dispatch.md#fairness).
   */
  protected async round() {
    const free = this.workers - this.running.size;
    if (free <= 0) return false;
    const due = await dueCampaigns(this.deps.db, new Date(), free + this.running.size);
    for (const id of due.filter((d) => !this.running.has(d)).slice(0, free)) {
      const step = runCampaignStep(this.deps, id)
        .then(
          () => undefined,
          (err) => console.error("[dispatch] step failed", id, err),
        )
        .finally(() => {
          this.running.delete(id);
          this.wake();
        });
      this.running.set(id, step);
    }
    // A finished step wakes the loop; meanwhile it sleeps until the next step falls due.
    return false;
  }

  protected async drain() {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  protected async sleepMs() {
    const max = this.opts.maxSleepMs ?? 1000;
    if (this.running.size >= this.workers) return max;
    const next = await nextDueAt(this.deps.db).catch(() => null);
    return next ? Math.min(max, Math.max(0, next.getTime() - Date.now())) : max;
  }
}
