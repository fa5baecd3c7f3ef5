import { dueWork } from "../server/dispatch/due-campaigns";
import { runCampaignStep, type DispatchDeps } from "../server/dispatch/run-campaign-step";
import { onDispatchWake } from "../server/dispatch/wake";
import { env } from "../server/env";
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

  /** Campaigns whose step runs now in this process: their step (stop() waits for them) and tenant. */
  private readonly running = new Map<string, { step: Promise<void>; tenantId: string }>();

  private get workers() {
    return this.opts.concurrency ?? env.dispatchConcurrency;
  }

  /**
   * Workers one tenant may hold at once (a quarter of the pool, at least one): a tenant sending many
   * campaigns at zero pacing runs at most this many loops side by side, and the rest of the pool stays
   * free for other tenants' campaigns as they fall due.
   */
  private get perTenant() {
    return Math.max(1, Math.ceil(this.workers / 4));
  }

  /**
   * A pool: each free worker takes the next due campaign (round-robin across tenants, dueCampaigns) as
   * soon as it is free, and a finished step wakes the loop; a tenant holds at most `perTenant` workers. A long step (a zero-pacing campaign's loop
   * of 100 sends) holds one worker, not the others: paced campaigns of other tenants keep their pace
   * beside it (docs/dispatch.md#fairness).
   */
  protected async round() {
    const free = this.workers - this.running.size;
    if (free <= 0) return false;
    // The due campaigns and the next due time in one statement (sleepMs uses the latter).
    const { due, nextAt } = await dueWork(this.deps.db, new Date(), free + this.workers);
    this.nextAt = nextAt;
    // Round-robin across tenants counts what already runs here: a tenant whose campaigns hold workers
    // comes after one that has none running, however long the former's other campaigns have waited.
    const busy = new Map<string, number>();
    for (const r of this.running.values()) busy.set(r.tenantId, (busy.get(r.tenantId) ?? 0) + 1);
    const picked: typeof due = [];
    for (let i = 0; i < free; i++) {
      const candidates = due.filter((d) => !this.running.has(d.id) && !picked.includes(d) && (busy.get(d.tenantId) ?? 0) < this.perTenant);
      if (candidates.length === 0) break;
      const next = candidates.reduce((best, d) => ((busy.get(d.tenantId) ?? 0) < (busy.get(best.tenantId) ?? 0) ? d : best));
      picked.push(next);
      busy.set(next.tenantId, (busy.get(next.tenantId) ?? 0) + 1);
    }
    for (const { id, tenantId } of picked) {
      const step = runCampaignStep(this.deps, id)
        .then(
          () => undefined,
          (err) => console.error("[dispatch] step failed", id, err),
        )
        .finally(() => {
          this.running.delete(id);
          this.wake();
        });
      this.running.set(id, { step, tenantId });
    }
    // A finished step wakes the loop; meanwhile it sleeps until the next step falls due.
    return false;
  }

  protected async drain() {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.step));
  }

  /** When the next campaign not due at the last round falls due (dueWork). */
  private nextAt: Date | null = null;

  protected async sleepMs() {
    const max = this.opts.maxSleepMs ?? 1000;
    if (this.running.size >= this.workers || !this.nextAt) return max;
    return Math.min(max, Math.max(0, this.nextAt.getTime() - Date.now()));
  }
}
