import { and, asc, inArray, isNull, sql } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import { preparedPerDb, rowsOf } from "../../db/params";
import { tableAs } from "../../db/relation";
import type { Db } from "../../db/client";
import { outboxEvents, webhookConfigs, webhookDeliveries } from "../../db/schema";
import { anyAppListensSql, appsListeningTo, appTarget, sentToApps } from "./partner-webhooks";
import { configuredUrl, configuredUrlSql } from "./webhook-config";
import { type WebhookType, webhookTypes } from "./schema";

export interface FannedOut {
  id: number;
  tenantId: string;
  target: string;
}

/** Serializes fan-outs (two processes on PostgreSQL) so deliveries of one campaign are created in event order. */
const FAN_OUT_LOCK = 7_246_001;

/**
 * Turns recorded outbox events into deliveries, oldest first: one per event whose type has a URL now
 * (target `tenant`), and one per partner app that gets the tenant's campaign events (partner-webhooks.ts).
 * Events nobody listens to are marked and dropped.
 * Returns the deliveries created, for an engine to deliver.
 */
export async function fanOutEvents(db: Db, now: Date, limit = 1000): Promise<FannedOut[]> {
  // Most looks find nothing (the engine looks every 50 ms for a second after each event): one indexed read,
  // prepared once, instead of a transaction's four statements. A race with a new event costs one look's delay.
  if ((await anyUnfanned(db).execute()).length === 0) return [];
  // The events nobody listens to (no URL for their type, no app for a campaign event: a tenant without webhooks, the
  // common case) are marked in one statement, without the transaction below (its seven statements were run after
  // every campaign_progress of every campaign, for nothing); the transaction only when some event is left.
  if (!(await dropUnheard(db, now, limit))) return [];
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${FAN_OUT_LOCK})`);
    const events = await tx
      .select({ id: outboxEvents.id, tenantId: outboxEvents.tenantId, type: outboxEvents.type, payload: outboxEvents.payload })
      .from(outboxEvents)
      .where(isNull(outboxEvents.fannedOutAt))
      .orderBy(asc(outboxEvents.id))
      .limit(limit);
    if (events.length === 0) return [];
    const tenantIds = [...new Set(events.map((e) => e.tenantId))];
    const configs = new Map((await tx.select().from(webhookConfigs).where(inArray(webhookConfigs.tenantId, tenantIds))).map((c) => [c.tenantId, c]));
    const apps = await appsListeningTo(tx, [...new Set(events.filter((e) => sentToApps[e.type as WebhookType]).map((e) => e.tenantId))], now);
    const rows = events.flatMap((e) => {
      const delivery = (target: string, payload: unknown) => ({
        tenantId: e.tenantId,
        eventId: e.id,
        target,
        type: e.type,
        orderingKey: `${e.type}:${orderingSubject(e.payload)}`,
        messageId: `msg_${e.id}`,
        payload,
        nextAttemptAt: now,
      });
      const own = configuredUrl(configs.get(e.tenantId), e.type as WebhookType) ? [delivery("tenant", e.payload)] : [];
      const partners = sentToApps[e.type as WebhookType] ? (apps.get(e.tenantId) ?? []) : [];
      // An app serves many tenants: its copy says whose event it is (the tenant's id, the `sub` of its tokens).
      return [...own, ...partners.map((app) => delivery(appTarget(app), { ...(e.payload as object), sub: e.tenantId }))];
    });
    const created = rows.length
      ? await tx
          .insert(webhookDeliveries)
          .values(rows)
          .onConflictDoNothing()
          .returning({ id: webhookDeliveries.id, tenantId: webhookDeliveries.tenantId, target: webhookDeliveries.target })
      : [];
    await tx
      .update(outboxEvents)
      .set({ fannedOutAt: now })
      .where(
        and(
          isNull(outboxEvents.fannedOutAt),
          inArray(
            outboxEvents.id,
            events.map((e) => e.id),
          ),
        ),
      );
    return created;
  });
}

/**
 * Marks fanned out the first `limit` unfanned events that would make no delivery (configuredUrl and appsListeningTo's
 * rule, in SQL); answers whether an unfanned event is left. Their order does not matter: they make no delivery, and
 * a concurrent fan-out skips what this marked (its UPDATE re-checks `fanned_out_at is null`).
 */
async function dropUnheard(db: Db, now: Date, limit: number): Promise<boolean> {
  const o = tableAs(outboxEvents, "o");
  const appTypes = webhookTypes.filter((t) => sentToApps[t]);
  const [row] = rowsOf<{ remaining: boolean }>(
    await db.execute(sql`with dropped as (
        update ${outboxEvents} ${o.name} set fanned_out_at = ${tsParam(now)}
        where ${o.col("id")} in (select id from ${outboxEvents} where fanned_out_at is null order by id limit ${limit})
          and ${o.col("fanned_out_at")} is null
          and not exists (select 1 from ${webhookConfigs} where ${webhookConfigs.tenantId} = ${o.col("tenant_id")}
                          and ${configuredUrlSql(o.col("type"))} is not null)
          and not (${o.col("type")} in (${sql.join(
            appTypes.map((t) => sql`${t}`),
            sql`, `,
          )}) and ${anyAppListensSql(o.col("tenant_id"), now)})
        returning ${o.col("id")})
      select exists (select 1 from ${outboxEvents} e where e.fanned_out_at is null and e.id not in (select id from dropped)) as remaining`),
  );
  return Boolean(row?.remaining);
}

/** Is any event waiting to be fanned out? (outbox_unfanned_idx: a partial index, so a look at its first entry.) */
const anyUnfanned = preparedPerDb((db: Db) =>
  db.select({ id: outboxEvents.id }).from(outboxEvents).where(isNull(outboxEvents.fannedOutAt)).limit(1).prepare("outbox_any_unfanned"),
);

/** Events about the same campaign (or channel, or launch) are delivered in order; different ones in parallel. */
function orderingSubject(payload: unknown): string {
  const data = (payload as { data?: Record<string, unknown> }).data ?? {};
  return String(data.id_campaign ?? data.id_channel ?? data.id_launch ?? "");
}
