import { dueWork } from "../../server/dispatch/due-campaigns";
import { pickDue } from "../../server/dispatch/pick-due";
import { runCampaignStep, type DispatchDeps } from "../../server/dispatch/run-campaign-step";
import { onDispatchWake } from "../../server/dispatch/wake";
import { env } from "../../server/env";
import { WakeableLoop } from "./wakeable-loop";

export interface RunnerOptions {
  /** Campaign steps run at once. */
  concurrency?: number;
  /** Longest sleep between two looks at the database. */
  maxSleepMs?: number;
  /** How early a step ending a pacing pause starts (it waits for the pause's end itself; DispatchDeps.leadMs). */
  leadMs?: number;
}

/**
 * A paced step starts this long before its pause ends: taking the lease and reading the campaign (slow when
 * the database is busy: hundreds of campaigns starting at once) happen within the pause, not after it, and
 * the step's worker is lent to others while it waits (docs/dispatch.md#how-pacing-the-queue-and-the-schedule-interact).
 */
export const pacingLeadMs = 1000;

/**
 * The in-process engine, used when no Inngest is configured: it runs the same domain step
 * (runCampaignStep) as the Inngest function, for every due campaign, sleeping until the next is due.
 * Durable state lives in the database, so a restart picks up where it stopped; campaign leases make
 * a second runner (another process, or Inngest) harmless.
 *
 * It keeps an agenda: when each campaign it knows of falls due. A step it ran tells it the campaign's
 * next run; a campaign created or resumed here is woken with its own (wakeDispatch's hint); and a look
 * at the database (dueWork) at least every `maxSleepMs` adds what is due or falls due before the next
 * look (another process's campaigns, a lease that ran out, anything after a restart). So a paced
 * campaign's next step starts from the agenda when its time comes, without a query first, and the
 * database is asked once a look, not once a step (docs/dispatch.md#fairness-between-tenants).
 */
export class InProcessRunner extends WakeableLoop {
  constructor(
    private readonly deps: DispatchDeps,
    private readonly opts: RunnerOptions = {},
  ) {
    super("dispatch");
  }

  protected subscribe() {
    return onDispatchWake((campaignId, due) => {
      if (campaignId && due) this.agenda.set(campaignId, { at: due.dueAt.getTime(), tenantId: due.tenantId });
      else this.lookNow = true;
      this.wake();
    });
  }

  /**
   * Campaigns whose step runs now in this process: their step (stop() waits for them), tenant, and whether
   * it is waiting for its pause to end (a waiting step holds no worker).
   */
  private readonly running = new Map<string, { step: Promise<void>; tenantId: string; waiting: boolean }>();
  /**
   * When each campaign this runner knows of may start (ms since the epoch), its tenant, and how much earlier
   * than its due time that is (`lead`: a paced step's; among the startable steps, the earliest due goes first).
   */
  private readonly agenda = new Map<string, { at: number; tenantId: string; lead?: number }>();
  /** A look at the database is wanted at the next round (start, a wake-up without a campaign). */
  private lookNow = true;
  private nextLookAt = 0;
  /** The look under way, if any. */
  private looking: Promise<void> | null = null;

  private get workers() {
    return this.opts.concurrency ?? env.dispatchConcurrency;
  }

  private get leadMs() {
    return this.opts.leadMs ?? pacingLeadMs;
  }

  /** Steps holding a worker (not waiting for their pause to end). */
  private get working() {
    let n = 0;
    for (const r of this.running.values()) if (!r.waiting) n++;
    return n;
  }

  /** A step waits out the rest of its pause with its worker lent: the loop may start another meanwhile. */
  private async lend(campaignId: string, ms: number) {
    const r = this.running.get(campaignId);
    if (r) r.waiting = true;
    this.wake();
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      if (r) r.waiting = false;
    }
  }

  private get lookEveryMs() {
    return this.opts.maxSleepMs ?? 1000;
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
   * A pool: each free worker takes the next due campaign as soon as it is free, and a finished step wakes
   * the loop; a tenant holds at most `perTenant` workers, and among the due campaigns one whose tenant runs
   * fewer here goes first (then the longest-waiting). A long step (a zero-pacing campaign's loop of 100
   * sends) holds one worker, not the others: paced campaigns of other tenants keep their pace beside it
   * (docs/dispatch.md#fairness).
   */
  protected async round() {
    const free = this.workers - this.working;
    if (free <= 0) return false;
    const now = Date.now();
    // A look runs beside the rounds and wakes the loop when it is done: a slow one (a connection being
    // opened again after the database dropped it) never holds up the steps the agenda says are due.
    if (!this.looking && (this.lookNow || now >= this.nextLookAt)) {
      this.looking = this.look(now, free)
        .catch((err) => {
          if (!this.isStopped) console.error("[dispatch] look at the database failed", err);
        })
        .finally(() => {
          this.looking = null;
          this.wake();
        });
    }
    const due = [...this.agenda]
      .filter(([id, e]) => e.at <= now && !this.running.has(id))
      .sort((a, b) => a[1].at + (a[1].lead ?? 0) - (b[1].at + (b[1].lead ?? 0)))
      .map(([id, e]) => ({ id, tenantId: e.tenantId }));
    const busy = new Map<string, number>();
    for (const r of this.running.values()) if (!r.waiting) busy.set(r.tenantId, (busy.get(r.tenantId) ?? 0) + 1);
    for (const { id, tenantId } of pickDue(due, busy, free, this.perTenant)) {
      this.agenda.delete(id);
      const deps = { ...this.deps, leadMs: this.leadMs, sleep: (ms: number) => this.lend(id, ms) };
      const step = runCampaignStep(deps, id)
        .then(
          (outcome) => {
            // Its next run goes on the agenda (none when it is finished or gone), a pacing pause's end `leadMs`
            // early. A campaign another worker holds ("busy") is left to the looks: the holder's release sets
            // its next run in the database.
            const lead = outcome.pacing ? this.leadMs : 0;
            if (outcome.nextRunAt && outcome.plan !== "busy") this.agenda.set(id, { at: outcome.nextRunAt.getTime() - lead, tenantId, lead });
          },
          (err) => {
            console.error("[dispatch] step failed", id, err);
            // Tried again in a second (a lease it left behind makes that attempt "busy": the looks take over).
            this.agenda.set(id, { at: Date.now() + 1000, tenantId });
          },
        )
        .finally(() => {
          this.running.delete(id);
          this.wake();
        });
      this.running.set(id, { step, tenantId, waiting: false });
    }
    // A finished step wakes the loop; meanwhile it sleeps until the next step falls due or the next look.
    return false;
  }

  /**
   * What the database says is due now or falls due before the look after this one (with a margin), onto
   * the agenda. What runs here is left out: its step's outcome says when it runs next.
   */
  private async look(now: number, free: number) {
    this.lookNow = false;
    this.nextLookAt = now + this.lookEveryMs;
    const { due, upcoming } = await dueWork(this.deps.db, new Date(now), free + this.workers, new Date(this.nextLookAt + this.lookEveryMs / 2));
    for (const d of due) this.note(d.id, now, d.tenantId);
    for (const u of upcoming) this.note(u.id, u.at.getTime(), u.tenantId);
  }

  /**
   * A look's finding onto the agenda, unless the campaign runs here or the agenda already has it starting no
   * later (a paced step's early start, or its place among the due): a look never postpones what a step said.
   */
  private note(id: string, at: number, tenantId: string) {
    if (this.running.has(id)) return;
    const known = this.agenda.get(id);
    if (!known || at < known.at) this.agenda.set(id, { at, tenantId });
  }

  protected async drain() {
    await this.looking;
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.step));
  }

  protected async sleepMs() {
    const max = this.lookEveryMs;
    if (this.working >= this.workers) return max;
    // A campaign due now and not taken waits for its tenant's share of the workers: the step that frees one wakes the loop.
    const now = Date.now();
    let until = this.nextLookAt;
    for (const e of this.agenda.values()) if (e.at > now && e.at < until) until = e.at;
    return Math.min(max, Math.max(0, until - now));
  }
}
