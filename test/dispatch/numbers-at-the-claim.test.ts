/**
 * The dispatch core's rules for several numbers (docs/dispatch.md#several-numbers-per-group), below HTTP where
 * the rule is about concurrency: claims racing for one number's cap or gap (on PostgreSQL they run on separate
 * connections of the pool; on PGlite one after the other), and failover never moving a send whose outcome is unknown.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { campaigns, channels, deliveries } from "../../db/schema";
import { claimDeliveries } from "../../server/dispatch/claim-deliveries";
import { moveStranded } from "../../server/dispatch/failover";
import { brasiliaDay } from "../../server/numbers/budget";
import { changeHealth } from "../../server/numbers/health";
import { brasiliaMinute, createCampaign } from "../campaigns";
import { newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const later = () => ({ scheduled_at: brasiliaMinute(new Date(Date.now() + 2 * 86_400_000)) });

async function numbers(t: Api, n: number) {
  const out: { id: string; phone: string; groups: string[] }[] = [];
  for (let i = 0; i < n; i++) {
    const id = (await t("POST", "/api/external/create-channel", { name: `N${i}` })).json.id_channel as string;
    const phone = (await t("GET", `/api/external/info-channel/${id}`)).json.phone as string;
    const groups = ((await t("GET", `/api/external/list-groups/${id}`)).json.groups as { id_group: string }[]).map((g) => g.id_group);
    out.push({ id, phone, groups });
  }
  return out;
}

/** `count` campaigns of 5 groups each on one channel, scheduled two days ahead (no engine touches them). */
async function campaignsOn(t: Api, channel: { id: string; groups: string[] }, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const seg = await t("POST", "/api/external/create-segment", { name: `S${i}`, id_channel: [channel.id], groups: channel.groups.slice(i * 5, i * 5 + 5) });
    ids.push((await createCampaign(t, seg.json.id_segment, later())).id_campaign);
  }
  return ids;
}

describe("the claim enforces a number's budget, also when claims race", () => {
  it("a cap of 7 over four campaigns claiming at once: 7 taken in all, the claim that reached it says so, sent_today 7", async () => {
    const t = await newTenant(server.url);
    const [a] = await numbers(t, 1);
    const ids = await campaignsOn(t, a, 4);
    const db = await getDb();
    const now = new Date();
    const budget = { at: now, day: brasiliaDay(now), limits: [{ id: a.id, cap: 7, gapMs: 0 }] };
    const claims = await Promise.all(
      ids.flatMap((id) => [claimDeliveries(db, id, 5, now, undefined, undefined, budget), claimDeliveries(db, id, 5, now, undefined, undefined, budget)]),
    );
    expect(claims.flat()).toHaveLength(7);
    expect(claims.flatMap((c) => c[0]?.cappedChannels ?? [])).toContain(a.id);
    const [row] = await db.select().from(channels).where(eq(channels.id, a.id));
    expect(row).toMatchObject({ sentToday: 7, usageDay: budget.day });
    // The cap reached, nothing more goes.
    expect(await claimDeliveries(db, ids[3], 5, now, undefined, undefined, budget)).toEqual([]);
  });

  it("a least gap: of claims racing for one number, one send goes; the next only once the gap has passed", async () => {
    const t = await newTenant(server.url);
    const [a] = await numbers(t, 1);
    const ids = await campaignsOn(t, a, 3);
    const db = await getDb();
    const now = new Date();
    const budget = { at: now, day: brasiliaDay(now), limits: [{ id: a.id, cap: null, gapMs: 60_000 }] };
    const claims = await Promise.all(ids.map((id) => claimDeliveries(db, id, 5, now, undefined, undefined, budget)));
    expect(claims.flat()).toHaveLength(1);
    const [row] = await db.select().from(channels).where(eq(channels.id, a.id));
    expect(row.nextSendAt?.getTime()).toBe(now.getTime() + 60_000);
    const soon = new Date(now.getTime() + 59_000);
    expect(await claimDeliveries(db, ids[0], 5, soon, undefined, undefined, { ...budget, at: soon })).toEqual([]);
    const after = new Date(now.getTime() + 60_000);
    expect(await claimDeliveries(db, ids[0], 5, after, undefined, undefined, { ...budget, at: after })).toHaveLength(1);
  });

  it("with no limit set every claim is counted (sent_today), racing claims included", async () => {
    const t = await newTenant(server.url);
    const [a] = await numbers(t, 1);
    const ids = await campaignsOn(t, a, 4);
    const db = await getDb();
    const now = new Date();
    const claims = await Promise.all(ids.map((id) => claimDeliveries(db, id, 5, now)));
    expect(claims.flat()).toHaveLength(20);
    const [row] = await db.select().from(channels).where(eq(channels.id, a.id));
    expect(row).toMatchObject({ sentToday: 20, usageDay: brasiliaDay(now) });
  });
});

describe("failover", () => {
  it("moves the pending deliveries of a banned number to the other, spread, recorded; a send whose outcome is unknown stays until settled", async () => {
    const t = await newTenant(server.url);
    const [a, b, c] = await numbers(t, 3);
    const groups = a.groups.slice(0, 6);
    for (const g of groups) {
      for (const other of [b, c]) {
        await t("POST", `/api/simulator/groups/${encodeURIComponent(g)}/participants`, { join: [other.phone] });
      }
    }
    const seg = await t("POST", "/api/external/create-segment", { name: "Três", id_channel: [a.id, b.id, c.id], groups });
    const { id_campaign: id } = await createCampaign(t, seg.json.id_segment, later());
    const db = await getDb();
    const onA = await db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.campaignId, id), eq(deliveries.channelId, a.id)));
    expect(onA).toHaveLength(2);
    // One of A's sends went out and its answer was lost (outcome unknown): it is `sending` until looked up.
    await db
      .update(deliveries)
      .set({ state: "sending", outcomeUnknownSince: new Date(), leaseUntil: new Date(Date.now() + 60_000), attempts: 1 })
      .where(eq(deliveries.id, onA[0].id));
    const now = new Date();
    await changeHealth(db, a.id, { state: "banned", reason: "test", until: null }, now);

    expect(await moveStranded(db, id, now)).toBe(1);
    const rows = await db.select().from(deliveries).where(eq(deliveries.campaignId, id));
    const unknown = rows.find((r) => r.id === onA[0].id)!;
    expect(unknown).toMatchObject({ channelId: a.id, state: "sending", movedFrom: null });
    const moved = rows.find((r) => r.id === onA[1].id)!;
    expect([b.id, c.id]).toContain(moved.channelId);
    expect(moved).toMatchObject({ state: "pending", movedFrom: a.id, movedAt: now });
    // Nothing else to move; the campaign's channels stay listed in order.
    expect(await moveStranded(db, id, now)).toBe(0);
    const [listed] = await db.select({ ids: campaigns.channelIds }).from(campaigns).where(eq(campaigns.id, id));
    expect(listed.ids).toEqual([a.id, b.id, c.id]);
  });
});
