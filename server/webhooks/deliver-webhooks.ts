import { and, asc, desc, eq, inArray, isNull, lt, lte, min, ne, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { webhookAttempts, webhookConfigs, webhookDeliveries } from "../../db/schema";
import { env } from "../env";
import { NotFound } from "../errors";
import { signatureHeader } from "./signing";
import type { WebhookType } from "./schema";
import { sendWebhook, type SendOptions, type SendResult } from "./send-webhook";
import { configuredUrl, disableUrl, signingSecrets, type WebhookConfigRow } from "./webhook-config";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export interface DeliverOptions {
  send?: (url: string, body: string, headers: Record<string, string>, opts?: SendOptions) => Promise<SendResult>;
  /** Deliveries of one tenant in flight at once (WEBHOOK_TENANT_CONCURRENCY). */
  concurrency?: number;
}

export interface AttemptOutcome {
  state: DeliveryRow["state"];
  status: number | null;
  /** When a pending delivery should be looked at again. */
  retryAt: Date | null;
}

/** A claimed delivery is held this long; an attempt is bounded by the 10 s time-out, a chain releases as it goes. */
const LEASE_MS = 5 * 60_000;

/** The body as sent: the event envelope with its keys in the documented order. */
export function webhookBody(payload: unknown): string {
  const p = payload as { type: string; timestamp: string; data: unknown; test?: boolean };
  return JSON.stringify(p.test ? { type: p.type, timestamp: p.timestamp, test: true, data: p.data } : { type: p.type, timestamp: p.timestamp, data: p.data });
}

/** Standard Webhooks headers: a stable `webhook-id`, a fresh `webhook-timestamp` per attempt, one signature per valid secret. */
export function webhookHeaders(secrets: string[], messageId: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return { "webhook-id": messageId, "webhook-timestamp": String(timestamp), "webhook-signature": signatureHeader(secrets, messageId, timestamp, body) };
}

/** The delay before the next attempt, or null to give up: the schedule with ±20 % jitter, never sooner than Retry-After. */
export function nextRetryDelay(attemptsMade: number, retryAfterMs: number | null, random = Math.random): number | null {
  const base = env.webhooks.retrySchedule[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  // Honour Retry-After, but never beyond a day (a receiver cannot park deliveries forever).
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, 86_400_000));
}

/**
 * One HTTP attempt of a claimed delivery, logged, and its outcome recorded: 2xx delivered; 410 disables
 * the URL and ends the delivery; anything else (3xx included: redirects are not followed) retries on
 * the schedule, then gives up. A URL disabled meanwhile cancels the delivery.
 */
export async function attemptDelivery(db: Db, d: DeliveryRow, config: WebhookConfigRow | undefined, opts: DeliverOptions = {}): Promise<AttemptOutcome> {
  const type = d.type as WebhookType;
  const url = configuredUrl(config, type);
  const at = new Date();
  if (!config || !url) {
    await db
      .update(webhookDeliveries)
      .set({ state: "canceled", leaseUntil: null, lastError: "no URL configured for this type", finishedAt: at })
      .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.state, "pending")));
    return { state: "canceled", status: null, retryAt: null };
  }
  const body = webhookBody(d.payload);
  const result = await (opts.send ?? sendWebhook)(url, body, webhookHeaders(signingSecrets(config, at), d.messageId, at, body));
  const attempts = d.attempts + 1;
  const ok = result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const delay = ok || gone ? null : nextRetryDelay(attempts, result.retryAfterMs);
  const end = new Date();
  const state: DeliveryRow["state"] = ok ? "delivered" : delay === null ? "failed" : "pending";
  const retryAt = delay === null ? null : new Date(end.getTime() + delay);
  const error = gone ? "410 Gone: URL disabled" : state === "failed" && !ok ? `${result.error ?? `HTTP ${result.status}`} (gave up after ${attempts} attempts)` : result.error;
  await db.transaction(async (tx) => {
    await tx.insert(webhookAttempts).values({
      tenantId: d.tenantId,
      deliveryId: d.id,
      type,
      url,
      attemptedAt: at,
      status: result.status,
      durationMs: result.durationMs,
      error: result.error,
    });
    await tx
      .update(webhookDeliveries)
      .set({
        state,
        attempts,
        nextAttemptAt: retryAt ?? d.nextAttemptAt,
        leaseUntil: null,
        lastStatus: result.status,
        lastError: error,
        finishedAt: state === "pending" ? null : end,
      })
      .where(eq(webhookDeliveries.id, d.id));
    if (gone) await disableUrl(tx, d.tenantId, type, url, end);
  });
  return { state, status: result.status, retryAt };
}

/** An earlier pending delivery of the same campaign/channel that is waiting (retry not due, or held by a worker). */
const blockedByEarlier = (now: Date) => sql`exists (
  select 1 from webhook_deliveries e
  where e.tenant_id = ${webhookDeliveries.tenantId} and e.target = ${webhookDeliveries.target}
    and e.ordering_key = ${webhookDeliveries.orderingKey} and e.state = 'pending' and e.event_id < ${webhookDeliveries.eventId}
    and (e.next_attempt_at > ${tsParam(now)} or e.lease_until > ${tsParam(now)}))`;

/** Claims a tenant's due deliveries (oldest event first), skipping any that would overtake a waiting earlier one. */
export async function claimDueDeliveries(db: Db, tenantId: string, now: Date, limit = 200): Promise<DeliveryRow[]> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .select()
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.tenantId, tenantId),
          eq(webhookDeliveries.state, "pending"),
          lte(webhookDeliveries.nextAttemptAt, now),
          or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
          sql`not ${blockedByEarlier(now)}`,
        ),
      )
      .orderBy(asc(webhookDeliveries.eventId))
      .limit(limit)
      .for("update", { skipLocked: true });
    if (rows.length === 0) return [];
    await tx
      .update(webhookDeliveries)
      .set({ leaseUntil: new Date(now.getTime() + LEASE_MS) })
      .where(inArray(webhookDeliveries.id, rows.map((r) => r.id)));
    return rows;
  });
}

/**
 * Delivers a tenant's due deliveries until none is left: events of one campaign (or channel) one after
 * the other in event order, stopping that chain at the first failure; different ones in parallel.
 */
export async function deliverDueForTenant(db: Db, tenantId: string, opts: DeliverOptions = {}): Promise<number> {
  let attempted = 0;
  for (;;) {
    const claimed = await claimDueDeliveries(db, tenantId, new Date());
    if (claimed.length === 0) return attempted;
    const [config] = await db.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId));
    const chains = new Map<string, DeliveryRow[]>();
    for (const d of claimed) chains.set(`${d.target}|${d.orderingKey}`, [...(chains.get(`${d.target}|${d.orderingKey}`) ?? []), d]);
    await mapLimit([...chains.values()], opts.concurrency ?? env.webhooks.tenantConcurrency, async (chain) => {
      for (let i = 0; i < chain.length; i++) {
        const outcome = await attemptDelivery(db, chain[i], config, opts).catch((err) => {
          console.error("[webhooks] attempt failed", chain[i].id, err);
          return { state: "pending" as const };
        });
        attempted++;
        if (outcome.state === "pending") {
          // The chain waits for this one: hand the rest back unattempted.
          const rest = chain.slice(i + 1).map((d) => d.id);
          if (rest.length) await db.update(webhookDeliveries).set({ leaseUntil: null }).where(inArray(webhookDeliveries.id, rest));
          return;
        }
      }
    });
  }
}

/**
 * One delivery, for an engine that runs a job per event (Inngest): attempts it when it is due, free and
 * first in its chain; otherwise says when to look again.
 */
export async function deliverOne(db: Db, deliveryId: number, opts: DeliverOptions = {}): Promise<AttemptOutcome> {
  const now = new Date();
  const claim = await db.transaction(async (tx) => {
    const [d] = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).for("update", { skipLocked: true });
    type Claim = { done?: DeliveryRow["state"]; wait?: Date; row?: DeliveryRow };
    if (!d) return { wait: new Date(now.getTime() + 1000) } as Claim;
    if (d.state !== "pending") return { done: d.state } as Claim;
    if (d.nextAttemptAt > now) return { wait: d.nextAttemptAt } as Claim;
    if (d.leaseUntil && d.leaseUntil > now) return { wait: d.leaseUntil } as Claim;
    const [earlier] = await tx
      .select({ at: min(webhookDeliveries.nextAttemptAt) })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.tenantId, d.tenantId),
          eq(webhookDeliveries.target, d.target),
          eq(webhookDeliveries.orderingKey, d.orderingKey),
          eq(webhookDeliveries.state, "pending"),
          lt(webhookDeliveries.eventId, d.eventId),
        ),
      );
    if (earlier?.at) return { wait: new Date(Math.max(earlier.at.getTime(), now.getTime()) + 1000) } as Claim;
    await tx.update(webhookDeliveries).set({ leaseUntil: new Date(now.getTime() + LEASE_MS) }).where(eq(webhookDeliveries.id, d.id));
    return { row: d } as Claim;
  });
  if (claim.done) return { state: claim.done, status: null, retryAt: null };
  if (claim.wait) return { state: "pending", status: null, retryAt: claim.wait };
  const row = claim.row!;
  const [config] = await db.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, row.tenantId));
  return attemptDelivery(db, row, config, opts);
}

/** Tenants with deliveries due now (the runner gives each its own worker). */
export async function tenantsWithDueDeliveries(db: Db, now: Date, limit = 100): Promise<string[]> {
  const rows = await db
    .selectDistinct({ tenantId: webhookDeliveries.tenantId })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.state, "pending"),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
      ),
    )
    .limit(limit);
  return rows.map((r) => r.tenantId);
}

export async function nextDeliveryDueAt(db: Db): Promise<Date | null> {
  const [row] = await db.select({ at: min(webhookDeliveries.nextAttemptAt) }).from(webhookDeliveries).where(eq(webhookDeliveries.state, "pending"));
  return row?.at ?? null;
}

/** Pending deliveries nobody is working on and overdue by more than a minute (Inngest's sweep re-requests them). */
export async function overdueDeliveries(db: Db, now: Date, limit = 500) {
  const before = new Date(now.getTime() - 60_000);
  return db
    .select({ id: webhookDeliveries.id, tenantId: webhookDeliveries.tenantId })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.state, "pending"),
        lte(webhookDeliveries.nextAttemptAt, before),
        or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
      ),
    )
    .orderBy(asc(webhookDeliveries.eventId))
    .limit(limit);
}

/** The dashboard's "redeliver": the same event (same webhook-id) goes through the schedule again. */
export async function redeliver(db: Db, tenantId: string, deliveryId: number, now: Date) {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ state: "pending", attempts: 0, nextAttemptAt: now, leaseUntil: null, finishedAt: null, lastError: null })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.tenantId, tenantId), ne(webhookDeliveries.state, "pending")))
    .returning({ id: webhookDeliveries.id, tenantId: webhookDeliveries.tenantId });
  if (!row) throw new NotFound("Delivery not found, or still pending.");
  return row;
}

/** The delivery log: newest first, each with its attempts. */
export async function listDeliveries(db: Db, tenantId: string, filter: { type?: WebhookType; state?: DeliveryRow["state"]; limit: number }) {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenantId),
        filter.type ? eq(webhookDeliveries.type, filter.type) : undefined,
        filter.state ? eq(webhookDeliveries.state, filter.state) : undefined,
      ),
    )
    .orderBy(desc(webhookDeliveries.id))
    .limit(filter.limit);
  const attempts = rows.length
    ? await db
        .select()
        .from(webhookAttempts)
        .where(inArray(webhookAttempts.deliveryId, rows.map((r) => r.id)))
        .orderBy(asc(webhookAttempts.id))
    : [];
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    messageId: r.messageId,
    state: r.state,
    attempts: r.attempts,
    nextAttemptAt: r.state === "pending" ? r.nextAttemptAt.toISOString() : null,
    lastStatus: r.lastStatus,
    lastError: r.lastError,
    createdAt: r.createdAt.toISOString(),
    payload: webhookBody(r.payload),
    log: attempts
      .filter((a) => a.deliveryId === r.id)
      .map((a) => ({ at: a.attemptedAt.toISOString(), url: a.url, status: a.status, durationMs: a.durationMs, error: a.error })),
  }));
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}
