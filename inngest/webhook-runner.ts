import type { Db } from "../db/client";
import { deliverDueForTenant, nextDeliveryDueAt, tenantsWithDueDeliveries, type DeliverOptions } from "../server/webhooks/deliver-webhooks";
import { fanOutEvents } from "../server/webhooks/fan-out-events";
import { onWebhookWake } from "../server/webhooks/wake";

export interface WebhookRunnerOptions extends DeliverOptions {
  /** Longest sleep between two looks at the outbox and the due deliveries. */
  maxSleepMs?: number;
  /** Tenants delivered at once (each in its own worker). */
  maxTenants?: number;
  /** Only these tenants' deliveries (tests that share a PostgreSQL database with other test files). */
  acceptTenant?: (tenantId: string) => boolean;
}

/**
 * The in-process webhook engine (no Inngest): turns outbox events into deliveries and delivers them
 * with the same domain steps the Inngest functions call. Each tenant gets its own worker, so a slow
 * receiver holds only its own tenant's deliveries; within a tenant, deliverDueForTenant keeps each
 * campaign's events in order. State is in the database: a restart resumes where it stopped.
 */
export class WebhookRunner {
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;
  private readonly tenants = new Map<string, Promise<void>>();
  private tickDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly opts: WebhookRunnerOptions = {},
  ) {}

  start() {
    this.stopped = false;
    // Events are recorded inside a transaction that commits just after: look a moment later.
    this.unsubscribe = onWebhookWake(() => this.wake(5));
    this.wake();
    return this;
  }

  async stop() {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.tickDone;
    await Promise.all(this.tenants.values());
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
    let more = false;
    try {
      const created = await fanOutEvents(this.db, new Date());
      more = created.length >= 1000;
      const due = await tenantsWithDueDeliveries(this.db, new Date(), 500);
      for (const tenantId of due) {
        if (this.opts.acceptTenant && !this.opts.acceptTenant(tenantId)) continue;
        if (this.tenants.has(tenantId) || this.tenants.size >= (this.opts.maxTenants ?? 64)) continue;
        const work = deliverDueForTenant(this.db, tenantId, this.opts)
          .catch((err) => console.error("[webhooks] delivery failed", tenantId, err))
          .then(() => {
            this.tenants.delete(tenantId);
            // A tenant's worker ending may leave work that became due meanwhile.
            this.wake();
          });
        this.tenants.set(tenantId, work);
      }
    } catch (err) {
      if (!this.stopped) console.error("[webhooks] runner tick failed", err);
    } finally {
      this.ticking = false;
      resolve();
    }
    if (this.stopped) return;
    if (more || this.again) {
      this.again = false;
      return this.schedule(0);
    }
    const max = this.opts.maxSleepMs ?? 250;
    const next = await nextDeliveryDueAt(this.db).catch(() => null);
    // A due delivery that is held (in flight, or behind an earlier one) is picked up when its worker wakes us.
    const inMs = next ? next.getTime() - Date.now() : max;
    this.schedule(inMs > 0 ? Math.min(max, inMs) : max);
  }
}
