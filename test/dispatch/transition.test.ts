/**
 * Status transitions (server/dispatch/transition.ts): one statement that locks the row, moves the status
 * and writes the events. Racing transitions of one campaign must leave a chain of `campaign_status`
 * events in which each one's previous_status is the status the one before it reported.
 */
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaigns, outboxEvents } from "../../db/schema";
import { claimDeliveries } from "../../server/dispatch/claim-deliveries";
import { transition } from "../../server/dispatch/transition";
import { getServices } from "../../server/services";
import { brasiliaMinute, createCampaign, tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

interface CampaignEvent {
  type: string;
  data: { id_campaign: string; status: string; previous_status?: string; groups: { total: number; sent: number; pending: number; failed: number } };
}

async function eventsOf(campaignId: string) {
  const { db } = await getServices();
  const rows = await db
    .select({ type: outboxEvents.type, payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(sql`${outboxEvents.payload} -> 'data' ->> 'id_campaign' = ${campaignId}`)
    .orderBy(asc(outboxEvents.id));
  return rows.map((r) => r.payload as CampaignEvent);
}

describe("campaign status transitions", () => {
  it("racing transitions of one campaign: each moves from the status the one before left (a chain of previous_status)", async () => {
    const { db } = await getServices();
    const { api, segment } = await tenantWithSegment(server.url, 3, 3);
    for (let round = 0; round < 15; round++) {
      const { id_campaign: id } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 86_400_000)) });
      const at = new Date();
      const results = await Promise.all([
        transition(db, id, ["pending"], "sending", at),
        transition(db, id, ["pending", "sending"], "paused", at, { pauseReason: "user" }),
        transition(db, id, ["paused"], "sending", at),
        transition(db, id, ["pending", "sending", "paused"], "canceled", at, { finishedAt: at }),
        transition(db, id, ["sending"], "paused", at, { pauseReason: "schedule" }),
      ]);
      // The first is the creation's (pending, no previous status).
      const [created, ...chain] = (await eventsOf(id)).filter((e) => e.type === "campaign_status");
      expect([created.data.status, created.data.previous_status]).toEqual(["pending", undefined]);
      expect(chain.length).toBe(results.filter(Boolean).length);
      let status = "pending";
      for (const e of chain) {
        expect(e.data.previous_status).toBe(status);
        status = e.data.status;
      }
      const [row] = await db.select({ status: campaigns.status }).from(campaigns).where(eq(campaigns.id, id));
      expect(row.status).toBe(status);
    }
  });

  it("to a final status: campaign_status, then the last campaign_progress, both of the new status; a refused transition writes nothing", async () => {
    const { db } = await getServices();
    const { api, segment } = await tenantWithSegment(server.url, 4, 4);
    const { id_campaign: id } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 86_400_000)) });
    const at = new Date();
    const row = await transition(db, id, ["pending"], "canceled", at, { finishedAt: at });
    expect(row).toMatchObject({ id, status: "canceled", finishedAt: at, lastProgressAt: at, pauseReason: null });
    expect(await transition(db, id, ["pending"], "sending", at)).toBeNull();
    const [, ...events] = await eventsOf(id);
    expect(events.map((e) => [e.type, e.data.status, e.data.previous_status])).toEqual([
      ["campaign_status", "canceled", "pending"],
      ["campaign_progress", "canceled", undefined],
    ]);
    for (const e of events) expect(e.data.groups).toEqual({ total: 4, sent: 0, pending: 4, failed: 0 });
    const stored = await db
      .select({ at: outboxEvents.createdAt })
      .from(outboxEvents)
      .where(sql`${outboxEvents.payload} -> 'data' ->> 'id_campaign' = ${id}`)
      .orderBy(asc(outboxEvents.id));
    expect(stored.slice(1).map((e) => e.at)).toEqual([at, at]);
  });

  it("a first loop's claim starts the campaign in its own statement, and takes nothing from a campaign paused meanwhile", async () => {
    const { db } = await getServices();
    const { api, segment } = await tenantWithSegment(server.url, 3, 3);
    const lease = { until: new Date(Date.now() + 60_000) };
    const leased = async (id: string) => db.update(campaigns).set({ leaseUntil: lease.until }).where(eq(campaigns.id, id));

    // Paused by the user after its step planned: the claim moves nothing and takes no group.
    const { id_campaign: paused } = await createCampaign(api, segment);
    await leased(paused);
    expect((await api("POST", `/api/external/pause-campaign/${paused}`)).status).toBe(200);
    expect(await claimDeliveries(db, paused, 3, new Date(), lease, { from: ["pending"] })).toEqual([]);
    expect((await api("GET", `/api/external/info-campaign/${paused}`)).json).toMatchObject({ status: "paused", groups: { pending: 3 } });

    // Still pending: its rows are claimed and it is `sending`, with its campaign_status event (from pending).
    const { id_campaign: id } = await createCampaign(api, segment);
    await leased(id);
    const at = new Date();
    expect(await claimDeliveries(db, id, 3, at, lease, { from: ["pending"] })).toHaveLength(3);
    const [row] = await db.select().from(campaigns).where(eq(campaigns.id, id));
    expect(row).toMatchObject({ status: "sending", startedAt: at });
    const statuses = (await eventsOf(id)).filter((e) => e.type === "campaign_status").map((e) => e.data);
    expect(statuses.map((d) => [d.status, d.previous_status])).toEqual([
      ["pending", undefined],
      ["sending", "pending"],
    ]);
  });
});
