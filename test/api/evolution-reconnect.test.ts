import { and, asc, eq, isNotNull, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { campaigns, deliveries, outboxEvents } from "../../db/schema";
import type { Services } from "../../server/services";
import { evolutionSendErrors, type FakeEvolution } from "../fake-evolution";
import { until, waitFor, type Api } from "../helpers";
import { startEvolutionWithRunner } from "../evolution-service";

// Sendable means sending (docs/evolution.md#a-number-that-is-reconnecting): a number Evolution is reconnecting
// silently (`connecting` posted, fetchInstances still `open`), or whose sends answer `Connection Closed`, for longer
// than the grace (EVOLUTION_RECONNECT_GRACE_SECONDS, 30 s by default, not shortened here) cannot send: its pending
// deliveries move to the other number of their groups, every group gets exactly one message, and the number sends
// again once the gateway says `open`. Both cases run at once (each ~35 s).
const groupCount = 24;

let fake: FakeEvolution;
let api: Api;
let services: Services;
let stop: () => Promise<void>;

beforeAll(async () => {
  // A 5-s client time-out: creating an instance waits for the gateway's first webhooks to us, slow on a loaded machine.
  const env = { EVOLUTION_TIMEOUT_MS: "5000" };
  const started = await startEvolutionWithRunner({ fake: { groupsPerInstance: groupCount }, env, channelLimit: 10, dispatchesPerLoop: 2 });
  ({ fake, api, services, stop } = started);
  // Each call takes a moment, so the trouble lands mid-campaign.
  fake.knobs.latencyMs = 60;
  // The two cases run side by side in this one account: one's campaign must not wait in the queue behind the other's
  // (stuck in its grace), or "sends again" measures the queue.
  expect((await api("PATCH", "/api/external/edit-settings", { queue: { concurrent_mode: "enabled" } })).status).toBe(200);
});
afterAll(() => stop());

const channelOf = async (id: string) => (await api("GET", `/api/external/info-channel/${id}`)).json as { status: string; health: { state: string } };

async function pairedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo" });
  const id = json.id_channel as string;
  await fake.pair(id);
  await until(
    () => channelOf(id),
    (c) => c.status === "connected",
  );
  return id;
}

/** Two numbers in the same groups, as admins (the first's regular groups, the second added on the phone): a segment of both. */
async function twoNumbers() {
  const [a, b] = [await pairedChannel(), await pairedChannel()];
  const ia = fake.instances.get(a)!;
  const ib = fake.instances.get(b)!;
  const shared = ia.groups.filter((g) => !g.announce && !g.isCommunity && !g.isCommunityAnnounce && !g.id.includes("-"));
  for (const g of shared) {
    g.participants = [
      { id: `${ia.owner}@s.whatsapp.net`, admin: "superadmin" },
      { id: `${ib.owner}@s.whatsapp.net`, admin: "admin" },
      { id: "5531988887777@s.whatsapp.net", admin: null },
    ];
    ib.groups.push(g);
  }
  const groups = shared.map((g) => g.id);
  const seg = await api("POST", "/api/external/create-segment", { name: "Dois números", id_channel: [a, b], groups });
  expect(seg.status).toBe(201);
  return { a, b, groups, segment: seg.json.id_segment as string };
}

async function campaign(segment: string, message: string) {
  const created = await api("POST", "/api/external/create-campaign/message", { name: message, id_segment: segment, message });
  expect(created.status).toBe(201);
  return created.json.id_campaign as string;
}

const campaignRow = async (id: string) => (await (await getDb()).select().from(campaigns).where(eq(campaigns.id, id)))[0];

/** Messages the gateway sent per group for one text, through any number. */
function perGroup(text: string) {
  const counts = new Map<string, number>();
  for (const m of fake.messages.filter((x) => x.body.text === text)) counts.set(m.number, (counts.get(m.number) ?? 0) + 1);
  return counts;
}

const sentThrough = (channel: string, text: string) => fake.messages.filter((m) => m.instance === channel && m.body.text === text).length;

/** The channel's `channel_status` webhooks: status/health, oldest first. */
async function statusEvents(channelId: string) {
  const rows = await (await getDb())
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(sql`${outboxEvents.type} = 'channel_status' and ${outboxEvents.payload} -> 'data' ->> 'id_channel' = ${channelId}`)
    .orderBy(asc(outboxEvents.id));
  return rows.map((r) => {
    const data = (r.payload as { data: { status: string; health: { state: string } } }).data;
    return `${data.status}/${data.health.state}`;
  });
}

/**
 * Runs a campaign over two numbers' groups; once a few are sent, `trouble` strikes the first number. Its pending
 * deliveries must have moved to the second within 60 s, the campaign complete with one message per group, nothing failed.
 */
async function failsOver(label: string, trouble: (a: string) => Promise<void>) {
  const { a, b, groups, segment } = await twoNumbers();
  const before = await statusEvents(a);
  const text = `Aula hoje (${label})`;
  const id = await campaign(segment, text);
  await until(
    () => campaignRow(id),
    (c) => c.sent >= 4,
    20_000,
  );
  const struck = Date.now();
  await trouble(a);
  // Within the grace nothing changes for the number: connected, healthy, no channel_status, no group failed.
  await new Promise((r) => setTimeout(r, 2000));
  expect(await channelOf(a)).toMatchObject({ status: "connected", health: { state: "ok" } });
  expect((await campaignRow(id)).failed).toBe(0);

  const db = await getDb();
  const stranded = async () =>
    (
      await db
        .select({ n: sql<number>`count(*)::int` })
        .from(deliveries)
        .where(and(eq(deliveries.campaignId, id), eq(deliveries.channelId, a), eq(deliveries.state, "pending")))
    )[0].n;
  await waitFor(
    `${label}: the first number's deliveries to move`,
    async () => (await stranded()) === 0 && (await channelOf(a)).status === "disconnected",
    60_000,
  );
  const movedAfter = Date.now() - struck;
  console.log(`[reconnect] ${label}: the first number's pending deliveries moved ${movedAfter} ms after it stopped sending`);
  expect(movedAfter).toBeLessThan(60_000);
  const moved = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, id), eq(deliveries.movedFrom, a), isNotNull(deliveries.movedAt)));
  expect(moved[0].n).toBeGreaterThan(0);

  const done = await until(
    () => campaignRow(id),
    (c) => ["completed", "failed"].includes(c.status),
    30_000,
  );
  expect(done).toMatchObject({ status: "completed", sent: groups.length, failed: 0 });
  await fake.idle();
  expect([...perGroup(text).entries()].sort()).toEqual([...groups].sort().map((g) => [g, 1]));
  // Offline by the grace, never a verdict on the number.
  expect(await channelOf(a)).toMatchObject({ status: "disconnected", health: { state: "ok" } });
  expect(await statusEvents(a)).toEqual([...before, "disconnected/ok"]);
  return { a, b, groups, segment, before };
}

/** Back: a new campaign over the same groups sends through both numbers, one message per group. */
async function sendsAgain(s: { a: string; b: string; groups: string[]; segment: string; before: string[] }, label: string) {
  await until(
    () => channelOf(s.a),
    (c) => c.status === "connected",
  );
  expect(await statusEvents(s.a)).toEqual([...s.before, "disconnected/ok", "connected/ok"]);
  const text = `De novo (${label})`;
  const id = await campaign(s.segment, text);
  const done = await until(
    () => campaignRow(id),
    (c) => ["completed", "failed"].includes(c.status),
    30_000,
  );
  expect(done).toMatchObject({ status: "completed", sent: s.groups.length, failed: 0 });
  await fake.idle();
  expect([...perGroup(text).entries()].sort()).toEqual([...s.groups].sort().map((g) => [g, 1]));
  expect(sentThrough(s.a, text)).toBeGreaterThan(0);
  expect(sentThrough(s.b, text)).toBeGreaterThan(0);
}

describe.concurrent("a number that cannot send past the grace fails over (EVOLUTION_RECONNECT_GRACE_SECONDS=30)", () => {
  it("a silent reconnect mid-campaign (2.3.7: a close 428 posts `connecting`; fetchInstances keeps `open`): moved within 60 s, one message per group; sends again once `open`", async () => {
    const s = await failsOver("reconnect", async (a) => {
      await fake.setState(a, "close", 428);
      expect(fake.instances.get(a)!.state).toBe("connecting");
    });
    // A state read (the poll's, for this one number) does not take it back while the gateway still reconnects
    // (fetchInstances would say `open`; connectionState says `connecting`).
    expect(await services.provider.getStatus(s.a)).toBe("disconnected");
    expect((await channelOf(s.a)).status).toBe("disconnected");
    // Baileys got the session back: Evolution posts `open`.
    await fake.setState(s.a, "open");
    await sendsAgain(s, "reconnect");
  }, 120_000);

  it("sends answered `Connection Closed` while the gateway says `open`: retried within the grace without losing an attempt, then moved; back when the gateway's state reads `open` (the poll)", async () => {
    let through = "";
    const s = await failsOver("connection closed", async (a) => {
      through = a;
      fake.failSend({ instance: a, message: evolutionSendErrors.connectionClosed, times: 100_000 });
    });
    // Fixed on the gateway (restarted): its connectionState says open, which the state poll reads (one channel here:
    // a whole pass would read the other case's number too) and brings the number back.
    fake.knobs.sendFailures = fake.knobs.sendFailures.filter((f) => f.instance !== through);
    expect(await services.provider.getStatus(s.a)).toBe("connected");
    await sendsAgain(s, "connection closed");
  }, 120_000);
});
