import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb, type Db } from "../../db/client";
import { outboxEvents, webhookAttempts, webhookDeliveries } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { pruneWebhookHistory } from "../../server/webhooks/prune-history";
import { webhookHistoryRows } from "./history-rows";

const day = 86_400_000;

describe("webhook history retention", () => {
  it("removes finished deliveries (with their attempts), fanned-out events and test attempts older than the retention; keeps the rest", async () => {
    // In one transaction, rolled back at the end: the file's database is left as the template made it.
    const rollback = new Error("rollback");
    await expect(
      (await getDb()).transaction(async (tx) => {
        await pruneScenario(tx as unknown as Db);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  });
});

async function pruneScenario(db: Db) {
  {
    const { tenantId } = await createTenant(db, { name: "Retenção", email: `r-${Date.now()}@example.test`, password: "senha-segura-123" });
    const now = new Date();
    const old = new Date(now.getTime() - 40 * day);
    const recent = new Date(now.getTime() - 2 * day);
    const rows = webhookHistoryRows(tenantId, old);

    const events = await db
      .insert(outboxEvents)
      .values([
        rows.event(old), // goes
        rows.event(old, false), // never fanned out: stays
        rows.event(recent), // recent: stays
      ])
      .returning({ id: outboxEvents.id });
    const deliveries = await db
      .insert(webhookDeliveries)
      .values([
        rows.delivery(events[0].id, "delivered", old, old), // goes
        rows.delivery(events[0].id + 1_000_000, "failed", old, old), // goes
        rows.delivery(events[0].id + 2_000_000, "pending", old, null), // pending: stays, however old
        rows.delivery(events[2].id, "delivered", old, recent), // recent: stays
      ])
      .returning({ id: webhookDeliveries.id });
    await db
      .insert(webhookAttempts)
      .values([rows.attempt(deliveries[0].id, old), rows.attempt(deliveries[3].id, recent), rows.attempt(null, old), rows.attempt(null, recent)]);

    const removed = await pruneWebhookHistory(db, now, 30);
    expect(removed).toEqual({ deliveries: 2, events: 1, testAttempts: 1 });

    const leftDeliveries = await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, tenantId));
    expect(leftDeliveries.map((d) => d.id).sort()).toEqual([deliveries[2].id, deliveries[3].id].sort());
    const leftEvents = await db
      .select({ id: outboxEvents.id })
      .from(outboxEvents)
      .where(
        inArray(
          outboxEvents.id,
          events.map((e) => e.id),
        ),
      );
    expect(leftEvents.map((e) => e.id).sort()).toEqual([events[1].id, events[2].id].sort());
    const leftAttempts = await db
      .select({ deliveryId: webhookAttempts.deliveryId, at: webhookAttempts.attemptedAt })
      .from(webhookAttempts)
      .where(eq(webhookAttempts.tenantId, tenantId));
    expect(leftAttempts).toHaveLength(2);
    expect(leftAttempts.every((a) => a.at.getTime() === recent.getTime())).toBe(true);

    // Nothing more to remove.
    expect(await pruneWebhookHistory(db, now, 30)).toEqual({ deliveries: 0, events: 0, testAttempts: 0 });
  }
}
