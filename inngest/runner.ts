import { dueCampaigns, nextDueAt } from "../server/dispatch/due-campaigns";
import { runCampaignStep, type DispatchDeps } from "../server/dispatch/run-campaign-step";
import { onDispatchWake } from "../server/dispatch/wake";
import { mapLimit } from "../server/map-limit";
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

  /**
   * One step each for as many due campaigns as there are workers, taken round-robin across tenants
   * (dueCampaigns), then a fresh look. A round ends when its slowest step does, so a round is at most
   * one loop long: a campaign that falls due meanwhile (another tenant's paced one, say) waits at most
   * that loop, never behind a queue of one tenant's campaigns.
   */
  protected async round() {
    const workers = this.opts.concurrency ?? 4;
    const due = await dueCampaigns(this.deps.db, new Date(), workers);
    await mapLimit(due, workers, (id) => runCampaignStep(this.deps, id).catch((err) => console.error("[dispatch] step failed", id, err)));
    return due.length > 0;
  }

  protected async sleepMs() {
    const max = this.opts.maxSleepMs ?? 1000;
    const next = await nextDueAt(this.deps.db).catch(() => null);
    return next ? Math.min(max, Math.max(0, next.getTime() - Date.now())) : max;
  }
}
