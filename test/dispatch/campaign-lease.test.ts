/**
 * Campaign leases (docs/dispatch.md "Leases and takeover"): short, renewed by a heartbeat while a step
 * runs, fenced by their own value, and seen by dueWork. Steps are driven by hand here (the test
 * server runs no engine), with a lease of a few hundred milliseconds instead of 10 s.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "../../db/client";
import { campaigns, deliveries, simulatorMessages } from "../../db/schema";
import { dueWork } from "../../server/dispatch/due-campaigns";
import { runCampaignStep } from "../../server/dispatch/run-campaign-step";
import type { MessagingProvider, OutboundMessage, SendManyOptions } from "../../server/messaging/provider";
import { getServices } from "../../server/services";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const leaseMs = 1500;

/** The simulator, with each sendMany held until `release()` (a slow gateway, or a stalled worker). */
function gatedProvider(inner: MessagingProvider) {
  let open!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const inside = new Promise<void>((r) => (entered = r));
  const provider = Object.create(inner) as MessagingProvider;
  provider.sendMany = async (messages: OutboundMessage[], options?: SendManyOptions) => {
    entered();
    await gate;
    return inner.sendMany(messages, options);
  };
  return { provider, release: () => open(), inside };
}

describe("campaign leases", () => {
  it("a step outlasting its lease keeps it (heartbeat), and its deliveries' leases move with it", async () => {
    const { api, segment } = await tenantWithSegment(server.url, 5, 5);
    const { id_campaign: id } = await createCampaign(api, segment);
    const { db, provider: sim } = await getServices();
    const slow = gatedProvider(sim);
    const a = runCampaignStep({ db, provider: slow.provider, leaseMs }, id);
    await slow.inside;
    await sleep(leaseMs * 3);
    // Three leases later, another worker still finds it busy, and A's in-flight rows still leased.
    const b = await runCampaignStep({ db, provider: sim, leaseMs }, id);
    expect(b.plan).toBe("busy");
    const inFlight = await db.select().from(deliveries).where(eq(deliveries.campaignId, id));
    for (const d of inFlight.filter((r) => r.state === "sending")) expect(d.leaseUntil!.getTime()).toBeGreaterThan(Date.now());
    slow.release();
    const outcome = await a;
    expect(outcome.sent).toBeGreaterThan(0);
    const [c] = await db.select().from(campaigns).where(eq(campaigns.id, id));
    expect(c.leaseUntil).toBeNull();
  });

  it("a step whose lease was taken over sends nothing more and does not touch the new holder's lease", async () => {
    const { api, segment } = await tenantWithSegment(server.url, 5, 5);
    const { id_campaign: id } = await createCampaign(api, segment);
    const { db, provider: sim } = await getServices();
    const stalled = gatedProvider(sim);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const a = runCampaignStep({ db, provider: stalled.provider, leaseMs }, id);
      await stalled.inside;
      // What a stalled worker looks like from outside: its leases ran out (here, moved into the past).
      const past = new Date(Date.now() - 1000);
      await db.update(campaigns).set({ leaseUntil: past }).where(eq(campaigns.id, id));
      await db.update(deliveries).set({ leaseUntil: past }).where(eq(deliveries.campaignId, id));
      // A's next renewal finds another value than its own: it stops (B takes over only after that in
      // real life, since a lease expires after its holder's own margin).
      await sleep(leaseMs);
      // B takes over: reconciles A's in-flight rows with the simulator (not in its log: pending) and sends them.
      const b = await runCampaignStep({ db, provider: sim, leaseMs: 60_000 }, id);
      expect(b.sent).toBe(5);
      // B's lease is released; hold the campaign as a third worker would, to see A leave it alone.
      const held = new Date(Date.now() + 60_000);
      await db.update(campaigns).set({ leaseUntil: held }).where(eq(campaigns.id, id));
      stalled.release();
      const outcome = await a;
      expect(outcome.sent).toBe(0);
      const log = await db.select().from(simulatorMessages).where(eq(simulatorMessages.campaignId, id));
      expect(log.length).toBe(5);
      // A sent nothing it had claimed: the simulator saw no repeated delivery key.
      expect(warn.mock.calls.filter((c) => String(c[0]).includes("repeated send"))).toEqual([]);
      const [c] = await db.select().from(campaigns).where(eq(campaigns.id, id));
      expect(c.leaseUntil?.getTime()).toBe(held.getTime());
      const rows = await db.select().from(deliveries).where(eq(deliveries.campaignId, id));
      expect(rows.every((r) => r.state === "sent")).toBe(true);
    } finally {
      warn.mockRestore();
    }
  });

  it("dueWork: a campaign another worker holds falls due when its lease ends, not now; once let go it is due", async () => {
    const { api, segment } = await tenantWithSegment(server.url, 3, 5);
    const { db } = await getServices();
    const { id_campaign: id } = await createCampaign(api, segment);
    const until = new Date(Date.now() + 7000);
    // Every other active campaign of this database out of the way, so the minimum is this one's.
    const db2 = await getDb();
    await db2.update(campaigns).set({ leaseUntil: until });
    const held = await dueWork(db, new Date(), 100, new Date(Date.now() + 10_000));
    expect(held.due.map((d) => d.id)).not.toContain(id);
    expect(held.upcoming.find((u) => u.id === id)?.at.getTime()).toBe(until.getTime());
    // Not before `until` of the look: a look up to 5 s ahead does not list it.
    expect((await dueWork(db, new Date(), 100, new Date(Date.now() + 5000))).upcoming.map((u) => u.id)).not.toContain(id);
    await db2.update(campaigns).set({ leaseUntil: null }).where(eq(campaigns.id, id));
    const free = await dueWork(db, new Date(), 100, new Date(Date.now() + 10_000));
    expect(free.due.map((d) => d.id)).toContain(id);
    // Due now, it is not among those falling due later: the runner takes it in this round.
    expect(free.upcoming.map((u) => u.id)).not.toContain(id);
  });
});
