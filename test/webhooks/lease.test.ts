import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getDb } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { rowLeaseMs } from "../../server/row-lease";
import { deliverDueForTenant, type DeliverOptions } from "../../server/webhooks/deliver-webhooks";
import { fanOutEvents } from "../../server/webhooks/fan-out-events";
import { newTenant } from "../helpers";
import { withServerAndReceiver } from "./fixtures";
import { recordMarkerEvent } from "./marker-events";

// A claimed delivery's lease (server/row-lease.ts): short, renewed while its worker works, so the deliveries
// of a process that died come free in seconds, never while their worker is alive and sending. The clock and
// the renewal timer are faked: a worker whose timer never fires is a worker that died.
const fx = withServerAndReceiver();
afterEach(() => vi.useRealTimers());

type Send = NonNullable<DeliverOptions["send"]>;

/** One delivery due for a new tenant, and a send that hangs until released. */
async function oneDueDelivery() {
  const api = await newTenant(fx.server.url);
  expect((await api("PATCH", "/api/external/edit-webhooks", { campaign_progress_url: `${fx.receiver.url}/lease` })).status).toBe(200);
  const db = await getDb();
  const data = { id_campaign: "c1", name: "C", status: "sending", seq: 1, groups: { total: 1, sent: 1, pending: 0, failed: 0 } };
  await db.transaction((tx) => recordMarkerEvent(tx, api.tenantId, "campaign_progress", data, new Date()));
  await fanOutEvents(db, new Date());
  const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, api.tenantId));
  let release!: () => void;
  let onCall!: () => void;
  const called = new Promise<void>((resolve) => {
    onCall = resolve;
  });
  const hanging: Send = () => {
    onCall();
    return new Promise((resolve) => {
      release = () => resolve({ status: 200, error: null, retryAfterMs: null, durationMs: 1 });
    });
  };
  const sentBy: string[] = [];
  const quick =
    (who: string): Send =>
    async () => {
      sentBy.push(who);
      return { status: 200, error: null, retryAfterMs: null, durationMs: 1 };
    };
  return { db, tenantId: api.tenantId, id: row.id, hanging, called, release: () => release(), quick, sentBy };
}

const leaseOf = async (db: Awaited<ReturnType<typeof getDb>>, id: number) =>
  (await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)))[0];

describe("webhook delivery leases", () => {
  it("a worker that dies holding a delivery frees it within the lease: another sends it after 30 s, not minutes", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"] });
    const d = await oneDueDelivery();
    const start = Date.now();
    void deliverDueForTenant(d.db, d.tenantId, "own", { send: d.hanging }); // dies mid-send: its timer never fires
    await d.called;
    const held = await leaseOf(d.db, d.id);
    expect(held.leaseUntil!.getTime() - start).toBeLessThanOrEqual(rowLeaseMs + 1000);

    vi.setSystemTime(start + rowLeaseMs - 1000);
    expect(await deliverDueForTenant(d.db, d.tenantId, "own", { send: d.quick("survivor") })).toBe(0);
    vi.setSystemTime(start + rowLeaseMs + 1000);
    expect(await deliverDueForTenant(d.db, d.tenantId, "own", { send: d.quick("survivor") })).toBe(1);
    expect(d.sentBy).toEqual(["survivor"]);
    expect((await leaseOf(d.db, d.id)).state).toBe("delivered");
    d.release();
  });

  it("a live worker's lease is renewed while its send runs: no one else takes the delivery in 400 s (longer than the old 5-minute lease)", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"] });
    const d = await oneDueDelivery();
    const start = Date.now();
    const first = deliverDueForTenant(d.db, d.tenantId, "own", { send: d.hanging });
    await d.called;
    for (let s = 10; s <= 400; s += 10) {
      await vi.advanceTimersByTimeAsync(10_000); // the clock moves and the renewal fires
      await vi.waitFor(async () => expect((await leaseOf(d.db, d.id)).leaseUntil!.getTime()).toBeGreaterThanOrEqual(start + s * 1000 + rowLeaseMs - 1000));
      expect(await deliverDueForTenant(d.db, d.tenantId, "own", { send: d.quick("other") })).toBe(0);
    }
    d.release();
    expect(await first).toBe(1);
    const done = await leaseOf(d.db, d.id);
    expect(done).toMatchObject({ state: "delivered", attempts: 1, leaseUntil: null });
    expect(d.sentBy).toEqual([]);
  });
});
