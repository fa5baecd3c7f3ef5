import { and, asc, inArray, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { outboxEvents, webhookDeliveries } from "../../db/schema";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { newTenant } from "../helpers";
import { withServerAndReceiver } from "./fixtures";
import { recordMarkerEvent } from "./marker-events";

// The fan-out marks the events nobody listens to in one statement (no transaction), and makes deliveries for the
// others in event order: an event makes a delivery exactly when its type has a URL (or an app gets it).
const fx = withServerAndReceiver();

const progress = (seq: number) => ({ id_campaign: "c1", name: "C", status: "sending", seq, groups: { total: 2, sent: seq, pending: 2 - seq, failed: 0 } });

describe("webhook fan-out", () => {
  it("events without a URL make no delivery and are marked; a URL's events become deliveries in order", async () => {
    const silent = await newTenant(fx.server.url);
    const listening = await newTenant(fx.server.url);
    expect((await listening("PATCH", "/api/external/edit-webhooks", { campaign_progress_url: `${fx.receiver.url}/fan-out` })).status).toBe(200);
    const db = await getDb();
    const at = new Date();
    await db.transaction(async (tx) => {
      await recordMarkerEvent(tx, silent.tenantId, "campaign_progress", progress(1), at);
      await recordMarkerEvent(tx, listening.tenantId, "campaign_status", { id_campaign: "c1", name: "C", status: "sending" }, at);
      await recordMarkerEvent(tx, listening.tenantId, "campaign_progress", progress(1), at);
      await recordMarkerEvent(tx, silent.tenantId, "channel_status", { id_channel: "ch1", status: "connected" }, at);
      await recordMarkerEvent(tx, listening.tenantId, "campaign_progress", progress(2), at);
    });
    const tenants = [silent.tenantId, listening.tenantId];

    const created = await fanOutEvents(db, new Date());
    expect(created.map((d) => d.tenantId)).toEqual([listening.tenantId, listening.tenantId]);
    const rows = await db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.tenantId, tenants)).orderBy(asc(webhookDeliveries.eventId));
    expect(rows.map((r) => [r.type, (r.payload as { data: { seq: number } }).data.seq])).toEqual([
      ["campaign_progress", 1],
      ["campaign_progress", 2],
    ]);
    // Every event is done with, heard or not: the next look finds nothing.
    expect(
      await db
        .select()
        .from(outboxEvents)
        .where(and(inArray(outboxEvents.tenantId, tenants), isNull(outboxEvents.fannedOutAt))),
    ).toEqual([]);
    expect(await fanOutEvents(db, new Date())).toEqual([]);
  });
});
