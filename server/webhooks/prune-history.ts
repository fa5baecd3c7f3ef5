import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { outboxEvents, webhookAttempts, webhookDeliveries } from "../../db/schema";
import { env } from "../env";
import { deleteInBatches, maintenanceBatch } from "../../db/batched-delete";

/**
 * Retention (WEBHOOK_RETENTION_DAYS, default 30): finished deliveries older than that (their attempts go
 * with them), outbox events already turned into deliveries, and test-webhook attempts. Pending deliveries
 * are never touched; an outbox event is only removed once fanned out, and a delivery carries its own copy
 * of the payload. Part of the one maintenance job (server/maintenance/purge-expired.ts); deletes in
 * batches until done. Returns how many rows went.
 */
export async function pruneWebhookHistory(db: Db, now: Date, days = env.webhooks.retentionDays, batch = maintenanceBatch) {
  const cutoff = tsParam(new Date(now.getTime() - days * 86_400_000));
  const deliveries = await deleteInBatches(
    db,
    (n) => sql`delete from ${webhookDeliveries} where id in (
      select id from ${webhookDeliveries} where state <> 'pending' and finished_at < ${cutoff} limit ${n})`,
    batch,
  );
  const events = await deleteInBatches(
    db,
    (n) => sql`delete from ${outboxEvents} where id in (
      select id from ${outboxEvents} where fanned_out_at is not null and created_at < ${cutoff} limit ${n})`,
    batch,
  );
  // Attempts of test-webhook calls belong to no delivery.
  const testAttempts = await deleteInBatches(
    db,
    (n) => sql`delete from ${webhookAttempts} where id in (
      select id from ${webhookAttempts} where delivery_id is null and attempted_at < ${cutoff} limit ${n})`,
    batch,
  );
  return { deliveries, events, testAttempts };
}
