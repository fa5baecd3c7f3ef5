import type { Db } from "../../db/client";
import { deliverDueForTenant, nextDeliveryDueAt, queueKey, tenantsWithDueDeliveries, type DeliverOptions } from "../../server/webhooks/deliver-webhooks";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { onWebhookWake } from "../../server/webhooks/wake";
import { WakeableLoop } from "./wakeable-loop";

export interface WebhookRunnerOptions extends DeliverOptions {
  /** Longest sleep between two looks at the outbox and the due deliveries. */
  maxSleepMs?: number;
  /** Tenants delivered at once (each in its own worker). */
  maxTenants?: number;
  /** Claims (of up to 200 deliveries) a worker makes before it is handed to the next tenant in turn. */
  batchesPerTurn?: number;
}

/**
 * The in-process webhook engine (no Inngest): turns outbox events into deliveries and delivers them
 * with the same domain steps the Inngest functions call. Each tenant gets its own worker (one for its own
 * deliveries, one for its partner apps' copies), so a slow receiver holds only its own tenant's
 * deliveries; within a worker, deliverDueForTenant keeps each campaign's events in order. State is in
 * the database: a restart resumes where it stopped. Workers are taken round-robin across tenants, one
 * bounded turn at a time (docs/decisions.md#limits-abuse-retention, "Fairness").
 */
export class WebhookRunner extends WakeableLoop {
  /** Running workers by tenant and audience. */
  private readonly tenants = new Map<string, Promise<void>>();
  /** The last queue (queueKey) given a worker: the next round starts after it. */
  private cursor = "";

  constructor(
    private readonly db: Db,
    private readonly opts: WebhookRunnerOptions = {},
  ) {
    super("webhooks");
  }

  /** When an event was last recorded in this process: for a second after, look often. */
  private wokeAt = 0;

  protected subscribe() {
    // Events are recorded inside a transaction that commits just after: look a moment later (and, in
    // case the commit was slower than that, every 50 ms for a second; see sleepMs).
    return onWebhookWake(() => {
      this.wokeAt = Date.now();
      this.wake(5);
    });
  }

  protected async round() {
    const created = await fanOutEvents(this.db, new Date());
    // Round-robin across tenants: free workers go to the queues after the last one started, and each
    // worker's turn is bounded (batchesPerTurn), so with every worker busy the others still get theirs.
    const due = await tenantsWithDueDeliveries(this.db, new Date(), 500, this.cursor);
    for (const { tenantId, audience } of due) {
      const key = queueKey({ tenantId, audience });
      if (this.tenants.has(key)) continue;
      if (this.tenants.size >= (this.opts.maxTenants ?? 64)) break;
      this.cursor = key;
      const work = deliverDueForTenant(this.db, tenantId, audience, { ...this.opts, maxBatches: this.opts.batchesPerTurn ?? 1 })
        .catch((err) => console.error("[webhooks] delivery failed", tenantId, audience, err))
        .then(() => {
          this.tenants.delete(key);
          // A worker ending may leave work that became due meanwhile.
          this.wake();
        });
      this.tenants.set(key, work);
    }
    return created.length >= 1000;
  }

  protected async sleepMs() {
    // Idle, the engine looks once a second (events of other processes, retries coming due); right after
    // a wake it looks every 50 ms, so a slow commit costs 50 ms, not a second.
    const max = Date.now() - this.wokeAt < 1000 ? Math.min(50, this.opts.maxSleepMs ?? 1000) : (this.opts.maxSleepMs ?? 1000);
    const next = await nextDeliveryDueAt(this.db).catch(() => null);
    // A due delivery that is held (in flight, or behind an earlier one) is picked up when its worker wakes us.
    const inMs = next ? next.getTime() - Date.now() : max;
    return inMs > 0 ? Math.min(max, inMs) : max;
  }

  protected async drain() {
    await Promise.all(this.tenants.values());
  }
}
