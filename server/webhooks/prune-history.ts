import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { affectedRows } from "../../db/params";
import { outboxEvents, webhookAttempts, webhookDeliveries } from "../../db/schema";
import { env } from "../env";

/** Rows removed per statement: a large backlog goes in several rounds instead of one long lock. */
const batch = 5_000;

/**
 * Retention (WEBHOOK_RETENTION_DAYS, default 30): finished deliveries older than that (their attempts go
 * with them), outbox events already turned into deliveries, and test-webhook attempts. Pending deliveries are never touched; an
 * outbox event is only removed once fanned out, and a delivery carries its own copy of the payload.
 * Returns how many rows went, to run again while a round was full.
 */
export async function pruneWebhookHistory(db: Db, now: Date, days = env.webhooks.retentionDays) {
  const cutoff = tsParam(new Date(now.getTime() - days * 86_400_000));
  const deliveries = await db.execute(sql`
    delete from ${webhookDeliveries} where id in (
      select id from ${webhookDeliveries} where state <> 'pending' and finished_at < ${cutoff} limit ${batch})`);
  const events = await db.execute(sql`
    delete from ${outboxEvents} where id in (
      select id from ${outboxEvents} where fanned_out_at is not null and created_at < ${cutoff} limit ${batch})`);
  // Attempts of test-webhook calls belong to no delivery.
  const tests = await db.execute(sql`
    delete from ${webhookAttempts} where id in (
      select id from ${webhookAttempts} where delivery_id is null and attempted_at < ${cutoff} limit ${batch})`);
  return { deliveries: affectedRows(deliveries), events: affectedRows(events), testAttempts: affectedRows(tests) };
}
