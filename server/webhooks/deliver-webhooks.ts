import { and, asc, desc, eq, inArray, lt, lte, min, ne, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { asyncCommit, tsParam } from "../../db/errors";
import { webhookAttempts, webhookConfigs, webhookDeliveries } from "../../db/schema";
import { env } from "../env";
import { NotFound } from "../errors";
import { signatureHeader } from "./signing";
import type { WebhookType } from "./schema";
import { sendWebhook, type SendOptions, type SendResult } from "./send-webhook";
import { appDestinations, appOfTarget, disableAppUrl } from "./partner-webhooks";
import { configuredUrl, disableUrl, signingSecrets } from "./webhook-config";
import { mapLimit } from "../map-limit";
import { claimRows, leaseFree, type RowLease } from "../row-lease";

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

/** The body as sent: the event envelope with its keys in the documented order. */
export function webhookBody(payload: unknown): string {
  const p = payload as { type: string; timestamp: string; data: unknown; test?: boolean; sub?: string };
  if (p.test) return JSON.stringify({ type: p.type, timestamp: p.timestamp, test: true, data: p.data });
  return JSON.stringify(p.sub ? { type: p.type, timestamp: p.timestamp, sub: p.sub, data: p.data } : { type: p.type, timestamp: p.timestamp, data: p.data });
}

/** Where a delivery goes now and the secrets that sign it; no URL: the delivery is canceled. */
export interface Destination {
  url: string | null;
  secrets: string[];
}

const noDestination: Destination = { url: null, secrets: [] };

/** What one URL setting is: the tenant's per type, an app's one URL. */
const urlKey = (d: DeliveryRow) => (d.target === "tenant" ? `tenant|${d.type}` : d.target);

/** The destinations of a tenant's deliveries: its own webhook configuration, or a partner app's (partner-webhooks.ts). */
async function destinationsOf(db: Db, tenantId: string, rows: DeliveryRow[], now: Date): Promise<(d: DeliveryRow) => Destination> {
  const [config] = rows.some((d) => d.target === "tenant") ? await db.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId)) : [];
  const apps = await appDestinations(db, tenantId, [...new Set(rows.map((d) => appOfTarget(d.target)).filter((id) => id !== null))], now);
  return (d) => {
    const app = appOfTarget(d.target);
    if (app) return apps.get(app) ?? noDestination;
    const url = configuredUrl(config, d.type as WebhookType);
    return config && url ? { url, secrets: signingSecrets(config, now) } : noDestination;
  };
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

interface AttemptRecord {
  d: DeliveryRow;
  url: string | null;
  at: Date;
  end: Date;
  result: SendResult | null;
  outcome: AttemptOutcome;
  error: string | null;
}

/**
 * One HTTP attempt of a claimed delivery and what it means: 2xx delivered; 410 disables the URL and ends
 * the delivery; anything else (3xx included: redirects are not followed) retries on the schedule, then
 * gives up. A URL disabled meanwhile cancels the delivery. Nothing is written: see recordAttempts.
 */
async function sendAttempt(d: DeliveryRow, dest: Destination, opts: DeliverOptions): Promise<AttemptRecord> {
  const url = dest.url;
  const at = new Date();
  if (!url) {
    const error = d.target === "tenant" ? "no URL configured for this type" : "the app has no webhook URL, or no longer holds the tenant's authorization";
    return { d, url: null, at, end: at, result: null, error, outcome: { state: "canceled", status: null, retryAt: null } };
  }
  const body = webhookBody(d.payload);
  const result = await (opts.send ?? sendWebhook)(url, body, webhookHeaders(dest.secrets, d.messageId, at, body));
  const attempts = d.attempts + 1;
  const ok = result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const delay = ok || gone ? null : nextRetryDelay(attempts, result.retryAfterMs);
  const end = new Date();
  const state: DeliveryRow["state"] = ok ? "delivered" : delay === null ? "failed" : "pending";
  const error = gone
    ? "410 Gone: URL disabled"
    : state === "failed"
      ? `${result.error ?? `HTTP ${result.status}`} (gave up after ${attempts} attempts)`
      : result.error;
  return { d, url, at, end, result, error, outcome: { state, status: result.status, retryAt: delay === null ? null : new Date(end.getTime() + delay) } };
}

/** Logs attempts and moves their deliveries, many in one transaction (asynchronous commit: a crash at worst resends). */
async function recordAttempts(db: Db, records: AttemptRecord[]) {
  if (records.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.execute(asyncCommit);
    const sent = records.filter((r) => r.result && r.url);
    if (sent.length > 0) {
      await tx.insert(webhookAttempts).values(
        sent.map((r) => ({
          tenantId: r.d.tenantId,
          deliveryId: r.d.id,
          type: r.d.type,
          url: r.url!,
          attemptedAt: r.at,
          status: r.result!.status,
          durationMs: r.result!.durationMs,
          error: r.result!.error,
        })),
      );
    }
    const values = sql.join(
      records.map(
        (r) =>
          sql`(${r.d.id}::bigint, ${r.outcome.state}::text, ${r.result ? r.d.attempts + 1 : r.d.attempts}::int,
               ${tsParam(r.outcome.retryAt ?? r.d.nextAttemptAt)}, ${r.result?.status ?? null}::int, ${r.error}::text,
               ${r.outcome.state === "pending" ? null : r.end.toISOString()}::timestamptz)`,
      ),
      sql`, `,
    );
    await tx.execute(sql`
      update webhook_deliveries d set state = v.state, attempts = v.attempts, next_attempt_at = v.next_at, lease_until = null,
        last_status = coalesce(v.status, d.last_status), last_error = v.error, finished_at = v.finished_at
      from (values ${values}) as v(id, state, attempts, next_at, status, error, finished_at)
      where d.id = v.id and d.state = 'pending'`);
    for (const r of records) {
      if (r.result?.status !== 410 || !r.url) continue;
      const app = appOfTarget(r.d.target);
      if (app) await disableAppUrl(tx, app, r.url);
      else await disableUrl(tx, r.d.tenantId, r.d.type as WebhookType, r.url, r.end);
    }
  });
}

/** One attempt of a claimed delivery, sent and recorded (the Inngest path; the runner batches the recording). */
export async function attemptDelivery(db: Db, d: DeliveryRow, dest: Destination, opts: DeliverOptions = {}): Promise<AttemptOutcome> {
  const record = await sendAttempt(d, dest, opts);
  await recordAttempts(db, [record]);
  return record.outcome;
}

/** Pending, due by `dueBy`, and held by no worker at `now`. */
const dueAndFree = (dueBy: Date, now: Date) =>
  and(eq(webhookDeliveries.state, "pending"), lte(webhookDeliveries.nextAttemptAt, dueBy), leaseFree(webhookDeliveries, now));

/** An earlier pending delivery of the same campaign/channel that is waiting (retry not due, or held by a worker). */
const blockedByEarlier = (now: Date) => sql`exists (
  select 1 from webhook_deliveries e
  where e.tenant_id = ${webhookDeliveries.tenantId} and e.target = ${webhookDeliveries.target}
    and e.ordering_key = ${webhookDeliveries.orderingKey} and e.state = 'pending' and e.event_id < ${webhookDeliveries.eventId}
    and (e.next_attempt_at > ${tsParam(now)} or e.lease_until > ${tsParam(now)}))`;

/** The tenant's own deliveries, or its partner apps' copies: each kind has its own delivery loop. */
export type Audience = "own" | "apps";
const ofAudience = (audience: Audience) => (audience === "own" ? eq(webhookDeliveries.target, "tenant") : ne(webhookDeliveries.target, "tenant"));

/** Claims a tenant's due deliveries of one audience (oldest event first), skipping any that would overtake a waiting earlier one. */
async function claimDueDeliveries(db: Db, tenantId: string, audience: Audience, now: Date, limit = 200): Promise<RowLease<DeliveryRow>> {
  return claimRows(db, webhookDeliveries, now, (tx) =>
    tx
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.tenantId, tenantId), ofAudience(audience), dueAndFree(now, now), sql`not ${blockedByEarlier(now)}`))
      .orderBy(asc(webhookDeliveries.eventId))
      .limit(limit)
      .for("update", { skipLocked: true }),
  );
}

/**
 * Delivers a tenant's due deliveries of one audience until none is left: events of one campaign (or
 * channel) one after the other in event order, stopping that chain at the first failure; different ones
 * in parallel. The runner gives the tenant's own deliveries and its partner apps' copies a worker each,
 * so a partner app's slow endpoint never holds back the tenant's own webhooks.
 */
export async function deliverDueForTenant(db: Db, tenantId: string, audience: Audience, opts: DeliverOptions & { maxBatches?: number } = {}): Promise<number> {
  let attempted = 0;
  // A turn: at most maxBatches claims, then the worker is handed back (WebhookRunner gives it to the next tenant).
  for (let batch = 0; batch < (opts.maxBatches ?? Infinity); batch++) {
    const lease = await claimDueDeliveries(db, tenantId, audience, new Date());
    if (lease.rows.length === 0) return attempted;
    // The lease is renewed while the chains run: a process that dies mid-batch frees its claim within rowLeaseMs.
    attempted += await lease.hold(() => deliverClaimed(db, tenantId, lease.rows, opts));
  }
  return attempted;
}

/** One claimed batch: events of one chain in order, stopping at its first failure; chains in parallel. */
async function deliverClaimed(db: Db, tenantId: string, claimed: DeliveryRow[], opts: DeliverOptions): Promise<number> {
  const destination = await destinationsOf(db, tenantId, claimed, new Date());
  const chains = new Map<string, DeliveryRow[]>();
  for (const d of claimed) chains.set(`${d.target}|${d.orderingKey}`, [...(chains.get(`${d.target}|${d.orderingKey}`) ?? []), d]);
  const records: AttemptRecord[] = [];
  const released: number[] = [];
  const gone = new Set<string>();
  await mapLimit([...chains.values()], opts.concurrency ?? env.webhooks.tenantConcurrency, async (chain) => {
    for (let i = 0; i < chain.length; i++) {
      // A 410 earlier in this batch disabled that URL: the rest of the batch does not call it again.
      const key = urlKey(chain[i]);
      const record = await sendAttempt(chain[i], gone.has(key) ? noDestination : destination(chain[i]), opts);
      if (record.result?.status === 410) gone.add(key);
      records.push(record);
      if (record.outcome.state === "pending") {
        // The chain waits for this one: the rest go back unattempted.
        released.push(...chain.slice(i + 1).map((d) => d.id));
        return;
      }
    }
  });
  await recordAttempts(db, records);
  if (released.length) await db.update(webhookDeliveries).set({ leaseUntil: null }).where(inArray(webhookDeliveries.id, released));
  return records.length;
}

/**
 * One delivery, for an engine that runs a job per event (Inngest): attempts it when it is due, free and
 * first in its chain; otherwise says when to look again.
 */
export async function deliverOne(db: Db, deliveryId: number, opts: DeliverOptions = {}): Promise<AttemptOutcome> {
  const now = new Date();
  const notNow: { done?: DeliveryRow["state"]; wait?: Date } = {};
  const lease = await claimRows(db, webhookDeliveries, now, async (tx) => {
    const [d] = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).for("update", { skipLocked: true });
    if (!d) notNow.wait = new Date(now.getTime() + 1000);
    else if (d.state !== "pending") notNow.done = d.state;
    else if (d.nextAttemptAt > now) notNow.wait = d.nextAttemptAt;
    else if (d.leaseUntil && d.leaseUntil > now) notNow.wait = d.leaseUntil;
    else {
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
      if (earlier?.at) notNow.wait = new Date(Math.max(earlier.at.getTime(), now.getTime()) + 1000);
    }
    return d && !notNow.done && !notNow.wait ? [d] : [];
  });
  if (notNow.done) return { state: notNow.done, status: null, retryAt: null };
  const [row] = lease.rows;
  if (!row) return { state: "pending", status: null, retryAt: notNow.wait ?? null };
  return lease.hold(async () => attemptDelivery(db, row, (await destinationsOf(db, row.tenantId, [row], now))(row), opts));
}

/** A worker's queue: one tenant's own deliveries, or its partner apps' copies. */
export const queueKey = (q: { tenantId: string; audience: Audience }) => `${q.tenantId}|${q.audience}`;

/**
 * Tenants with deliveries due now, per audience (the runner gives each pair its own worker), in
 * round-robin order (docs/decisions.md#limits-abuse-retention, "Fairness"): the queues after `after` (the last one served, see
 * queueKey) first, then from the start again. Workers that free up go to the next tenant in turn, not to
 * the one that happens to come first, so a tenant with a flood of deliveries cannot keep them all.
 */
export async function tenantsWithDueDeliveries(db: Db, now: Date, limit = 100, after = ""): Promise<{ tenantId: string; audience: Audience }[]> {
  const key = sql<string>`${webhookDeliveries.tenantId} || case when ${webhookDeliveries.target} = 'tenant' then '|own' else '|apps' end`;
  const rows = await db.select({ key }).from(webhookDeliveries).where(dueAndFree(now, now)).groupBy(key).orderBy(sql`${key} <= ${after}`, key).limit(limit);
  return rows.map((r) => {
    const split = r.key.lastIndexOf("|");
    return { tenantId: r.key.slice(0, split), audience: r.key.slice(split + 1) as Audience };
  });
}

export async function nextDeliveryDueAt(db: Db): Promise<Date | null> {
  const [row] = await db
    .select({ at: min(webhookDeliveries.nextAttemptAt) })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.state, "pending"));
  return row?.at ?? null;
}

/**
 * Pending deliveries nobody is working on and overdue by more than a minute (Inngest's sweep re-requests
 * them), round-robin across tenants: each tenant's oldest first, then each tenant's second, and so on.
 */
export async function overdueDeliveries(db: Db, now: Date, limit = 500) {
  const before = new Date(now.getTime() - 60_000);
  const ranked = db
    .select({
      id: webhookDeliveries.id,
      tenantId: webhookDeliveries.tenantId,
      target: webhookDeliveries.target,
      eventId: webhookDeliveries.eventId,
      turn: sql<number>`row_number() over (partition by ${webhookDeliveries.tenantId} order by ${webhookDeliveries.eventId}, ${webhookDeliveries.id})`.as(
        "turn",
      ),
    })
    .from(webhookDeliveries)
    .where(dueAndFree(before, now))
    .as("ranked");
  return db
    .select({ id: ranked.id, tenantId: ranked.tenantId, target: ranked.target })
    .from(ranked)
    .orderBy(asc(ranked.turn), asc(ranked.eventId), asc(ranked.id))
    .limit(limit);
}

/** The dashboard's "redeliver": the same event (same webhook-id) goes through the schedule again. */
export async function redeliver(db: Db, tenantId: string, deliveryId: number, now: Date) {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ state: "pending", attempts: 0, nextAttemptAt: now, leaseUntil: null, finishedAt: null, lastError: null })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.tenantId, tenantId),
        eq(webhookDeliveries.target, "tenant"),
        ne(webhookDeliveries.state, "pending"),
      ),
    )
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
        eq(webhookDeliveries.target, "tenant"), // partner apps' copies are theirs, not in the tenant's log
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
        .where(
          inArray(
            webhookAttempts.deliveryId,
            rows.map((r) => r.id),
          ),
        )
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
