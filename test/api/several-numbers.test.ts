/**
 * CONTRACT §7 through HTTP (docs/dispatch.md#several-numbers-per-group): one group reached by several of a
 * segment's channels gets one message, spread over them; failover when a number is banned; a number's daily cap
 * and its least gap between sends, enforced at the claim. The simulator's §7 controls make a channel a member of
 * another's group by its number and take a number off, as the platform would.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { formatInTimeZone } from "date-fns-tz";
import { rowsOf } from "../../db/params";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaigns, channels, deliveries } from "../../db/schema";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { WebhookRunner } from "../../inngest/in-process/webhook-runner";
import { brasiliaDay, nextBrasiliaMidnight } from "../../server/numbers/budget";
import { getServices } from "../../server/services";
import { joinAsAdmin, tenantWithNumbers, until, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { startReceiver, type Receiver } from "../webhooks/receiver";

let server: TestServer;
let dispatch: InProcessRunner;
let webhooks: WebhookRunner;
let receiver: Receiver;

beforeAll(async () => {
  process.env.WEBHOOK_ALLOW_PRIVATE = "1";
  server = await startTestServer();
  receiver = await startReceiver();
  const services = await getServices();
  dispatch = new InProcessRunner(services, { maxSleepMs: 50 }).start();
  webhooks = new WebhookRunner(services.db, { maxSleepMs: 50 }).start();
});
afterAll(async () => {
  await webhooks?.stop();
  await dispatch?.stop();
  await receiver?.close();
  await server?.close();
});

interface Logged {
  id_channel: string;
  id_group: string;
  sent_at: string;
}

const pacing = (seconds: number, perLoop: number) => ({
  dispatch_rates: { min_dispatch_rate: seconds, max_dispatch_rate: seconds, dispatches_per_loop: perLoop, min_campaign_interval: 0, max_campaign_interval: 0 },
});

async function segment(t: Api, channels: string[], groups: string[]) {
  const res = await t("POST", "/api/external/create-segment", { name: "Lançamento", id_channel: channels, groups });
  expect(res.status, res.text).toBe(201);
  return res.json.id_segment as string;
}

async function campaign(t: Api, segmentId: string, name = "Oferta") {
  const res = await t("POST", "/api/external/create-campaign/message", { name, id_segment: segmentId, message: `Aula hoje às 20h (${name})` });
  expect(res.status, res.text).toBe(201);
  return res.json.id_campaign as string;
}

const info = (t: Api, id: string) => t("GET", `/api/external/info-campaign/${id}`);
const finished = (t: Api, id: string, ms = 30_000) =>
  until(
    () => info(t, id),
    (r) => ["completed", "failed"].includes(r.json.status),
    ms,
  );
const log = async (t: Api, id: string) => (await t("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as Logged[];
const byChannel = (messages: Logged[]) => {
  const out: Record<string, number> = {};
  for (const m of messages) out[m.id_channel] = (out[m.id_channel] ?? 0) + 1;
  return out;
};
/** Every group exactly once. */
function expectOncePerGroup(messages: Logged[], groups: string[]) {
  expect(messages.map((m) => m.id_group).sort()).toEqual([...groups].sort());
}

describe("one group, several channels: the fan-out spreads, exactly once", () => {
  it("16 groups, 10 of them reached by two channels: one message each, 8 and 8, through a channel that reaches the group; channels = the log", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2, pacing(0, 10));
    const [a, b] = numbers;
    const shared = a.groups.slice(0, 10);
    const onlyB = b.groups.slice(0, 6);
    await joinAsAdmin(t, shared, b.phone);
    const id = await campaign(t, await segment(t, [a.id, b.id], [...shared, ...onlyB]));
    const done = await finished(t, id);
    expect(done.json).toMatchObject({ status: "completed", pause_reason: null, groups: { total: 16, sent: 16, pending: 0, failed: 0 } });
    const messages = await log(t, id);
    expectOncePerGroup(messages, [...shared, ...onlyB]);
    // A group only B reaches goes through B; the shared ones make up the difference (CONTRACT §7: evenly).
    for (const m of messages.filter((x) => onlyB.includes(x.id_group))) expect(m.id_channel).toBe(b.id);
    expect(byChannel(messages)).toEqual({ [a.id]: 8, [b.id]: 8 });
    expect(done.json.channels).toEqual([
      { id_channel: a.id, sent: 8, pending: 0, failed: 0 },
      { id_channel: b.id, sent: 8, pending: 0, failed: 0 },
    ]);

    // Every group reachable by both: the counts differ by at most one (5 and 5 of 10; 6 and 5 of 11).
    for (const n of [10, 11]) {
      await joinAsAdmin(t, a.groups.slice(10, 11), b.phone);
      const id2 = await campaign(t, await segment(t, [a.id, b.id], a.groups.slice(0, n)), `Todos ${n}`);
      expect((await finished(t, id2)).json.status).toBe("completed");
      const counts = Object.values(byChannel(await log(t, id2))).sort();
      expect(counts).toEqual(n === 10 ? [5, 5] : [5, 6]);
      // Dealt in turn by position, in the segment's order of channels: A, B, A, B, …
      const order = await deliveryChannels(id2);
      expect(order.slice(0, 4)).toEqual([a.id, b.id, a.id, b.id]);
    }
  }, 120_000);

  it("a group only A reaches, placed where the turn would give B, goes through A even when the monitoring group's reach rows make up the count", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2, pacing(0, 10));
    const [a, b] = numbers;
    const [g1, onlyA, g3, watch] = a.groups.slice(0, 4);
    await joinAsAdmin(t, [g1, g3], b.phone);
    // Reach rows: 3 of A, 2 of B, and the monitoring group's 1 (A alone): 6 = groups × channels, yet onlyA lacks B.
    const segmentId = await segment(t, [a.id, b.id], [g1, onlyA, g3]);
    const watched = await t("POST", "/api/external/monitoring/group", { id_segment: segmentId, id_channel: a.id, id_group: watch });
    expect(watched.status, watched.text).toBe(201);
    // Scheduled for tomorrow: the fan-out's choice is read before any send could move it (failover would hide it).
    const tomorrow = formatInTimeZone(new Date(Date.now() + 86_400_000), "America/Sao_Paulo", "dd/MM/yyyy - HH:mm");
    const res = await t("POST", "/api/external/create-campaign/message", { name: "Só A", id_segment: segmentId, message: "Oi", scheduled_at: tomorrow });
    expect(res.status, res.text).toBe(201);
    // onlyA first (fewest choices) on A; the two shared then one each, A and B, by position.
    expect(await deliveryChannels(res.json.id_campaign)).toEqual([a.id, a.id, b.id]);
  }, 60_000);
});

describe("failover", () => {
  it("a number banned mid-campaign: the rest goes through the other number, none through the banned one after the ban; channel_status with health banned is delivered", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2, pacing(0.15, 1));
    const [a, b] = numbers;
    const path = `/ban-${t.tenantId}`;
    expect((await t("PATCH", "/api/external/edit-webhooks", { channel_status_url: `${receiver.url}${path}` })).status).toBe(200);
    const groups = a.groups.slice(0, 16);
    await joinAsAdmin(t, groups, b.phone);
    const id = await campaign(t, await segment(t, [a.id, b.id], groups));
    await waitFor("a few sends through each number", async () => {
      const sent = byChannel(await log(t, id));
      return (sent[a.id] ?? 0) >= 2 && (sent[b.id] ?? 0) >= 2;
    });
    const ban = await t("POST", `/api/simulator/channels/${b.id}/state`, { health: "banned" });
    expect(ban.json).toMatchObject({ success: true, connected: false, health: "banned" });
    const bannedAt = Date.now();

    const done = await finished(t, id);
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 16, sent: 16, pending: 0, failed: 0 } });
    const messages = await log(t, id);
    expectOncePerGroup(messages, groups);
    const throughB = messages.filter((m) => m.id_channel === b.id);
    expect(throughB.length).toBeGreaterThanOrEqual(2);
    for (const m of throughB) expect(new Date(m.sent_at).getTime()).toBeLessThanOrEqual(bannedAt);
    expect(messages.filter((m) => m.id_channel === a.id).length).toBe(16 - throughB.length);
    // The campaign never stopped: the other number took B's groups (CONTRACT §7: pause only when nothing can go).
    expect(done.json.channels).toEqual([
      { id_channel: a.id, sent: 16 - throughB.length, pending: 0, failed: 0 },
      { id_channel: b.id, sent: throughB.length, pending: 0, failed: 0 },
    ]);
    const statuses = (await t("GET", `/api/external/info-channel/${b.id}`)).json;
    expect(statuses).toMatchObject({ status: "disconnected", health: { state: "banned" } });

    const delivered = await waitFor("channel_status banned at the receiver", () =>
      receiver.received
        .filter((r) => r.path === path)
        .map((r) => JSON.parse(r.body))
        .find((e) => e.type === "channel_status" && e.data.id_channel === b.id && e.data.health?.state === "banned"),
    );
    expect(delivered.data).toMatchObject({ status: "disconnected", previous_status: "connected" });

    // The audit log (docs/team.md#audit-log): the service's failover of this campaign and the number's health change.
    const audit = (await t("GET", "/api/external/list-audit-log?actor_type=system")).json.entries as {
      action: string;
      target: string;
      actor: { type: string };
    }[];
    expect(audit).toContainEqual(expect.objectContaining({ action: "campaign.failover", target: id, actor: expect.objectContaining({ type: "system" }) }));
    expect(audit).toContainEqual(expect.objectContaining({ action: "channel.health_banned", target: b.id }));
  });

  it("a group only the banned number reaches waits; the campaign pauses as channel_offline when nothing else is left, and goes on when the number is paired again", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2, pacing(0, 10));
    const [a, b] = numbers;
    const shared = a.groups.slice(0, 4);
    await joinAsAdmin(t, shared, b.phone);
    const onlyB = b.groups.slice(0, 2);
    const seg = await segment(t, [a.id, b.id], [...shared, ...onlyB]);
    expect((await t("POST", `/api/simulator/channels/${b.id}/state`, { health: "banned" })).status).toBe(200);
    const id = await campaign(t, seg);
    const paused = await until(
      () => info(t, id),
      (r) => r.json.status === "paused",
    );
    expect(paused.json).toMatchObject({ pause_reason: "channel_offline", groups: { sent: 4, pending: 2, failed: 0 } });
    expect(byChannel(await log(t, id))).toEqual({ [a.id]: 4 });
    // Paired again (a new pairing clears the ban): the two groups go through B.
    expect((await t("POST", `/api/simulator/channels/${b.id}/state`, { connected: true })).status).toBe(200);
    expect((await finished(t, id)).json).toMatchObject({ status: "completed", groups: { sent: 6, pending: 0, failed: 0 } });
    expect(byChannel(await log(t, id))).toEqual({ [a.id]: 4, [b.id]: 2 });
  });
});

describe("the counters per channel are kept, never counted", () => {
  it("failover over three numbers: info-campaign's channels equal a fresh count of the deliveries when paused midway and once it completes", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 3, pacing(0.5, 1));
    const [a, b, c] = numbers;
    const groups = a.groups.slice(0, 18);
    await joinAsAdmin(t, groups, b.phone);
    await joinAsAdmin(t, groups, c.phone);
    const id = await campaign(t, await segment(t, [a.id, b.id, c.id], groups));
    const kept = async () => (await info(t, id)).json.channels as { id_channel: string; sent: number; pending: number; failed: number }[];
    await waitFor("a send through each number", async () => Object.keys(byChannel(await log(t, id))).length === 3);
    expect((await t("POST", `/api/simulator/channels/${b.id}/state`, { health: "banned" })).status).toBe(200);
    // B's pending groups move to A and C (failover): its counters move in the same statement.
    const moved = await until(kept, (chs) => chs[1].pending === 0, 30_000);
    expect(moved.map((ch) => ch.id_channel)).toEqual([a.id, b.id, c.id]);
    // Paused midway (its sends in flight settled: two reads agree), the kept counters are the deliveries' count.
    expect((await t("POST", `/api/external/pause-campaign/${id}`)).status).toBe(200);
    let last = "";
    await waitFor("the paused campaign's counters settled", async () => {
      const now = JSON.stringify(await kept());
      const same = now === last;
      last = now;
      if (!same) await new Promise((r) => setTimeout(r, 300));
      return same;
    });
    const midway = await kept();
    expect(midway).toEqual(await counted(id));
    expect(midway.reduce((n, ch) => n + ch.pending, 0)).toBeGreaterThan(0);
    expect((await t("POST", `/api/external/resume-campaign/${id}`)).status).toBe(200);
    const done = await finished(t, id);
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 18, sent: 18, pending: 0, failed: 0 } });
    expect(done.json.channels).toEqual(await counted(id));
    const sent = byChannel(await log(t, id));
    expect(done.json.channels).toEqual([a, b, c].map((n) => ({ id_channel: n.id, sent: sent[n.id] ?? 0, pending: 0, failed: 0 })));
  }, 120_000);
});

/** A fresh count of the campaign's deliveries per channel (segment groups only), in info-campaign's order of channels. */
async function counted(campaignId: string) {
  const { db } = await getServices();
  const rows = rowsOf<{ id_channel: string; sent: number; pending: number; failed: number }>(
    await db.execute(sql`select channel_id as id_channel, (count(*) filter (where state = 'sent'))::int as sent,
        (count(*) filter (where state in ('pending', 'sending')))::int as pending, (count(*) filter (where state = 'failed'))::int as failed
      from ${deliveries} where campaign_id = ${campaignId} and not is_monitoring group by channel_id`),
  );
  const [listed] = await db.select({ ids: campaigns.channelIds }).from(campaigns).where(eq(campaigns.id, campaignId));
  return listed.ids.map((id) => rows.find((r) => r.id_channel === id) ?? { id_channel: id, sent: 0, pending: 0, failed: 0 });
}

/** The channel of each of the campaign's segment groups, by position. */
async function deliveryChannels(campaignId: string) {
  const { db } = await getServices();
  const rows = await db
    .select({ channelId: deliveries.channelId })
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.isMonitoring, false)))
    .orderBy(asc(deliveries.position));
  return rows.map((r) => r.channelId);
}

describe("a campaign none of whose groups can go when it starts", () => {
  it("pauses as channel_offline (not left pending), and starts when the number is paired again", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2, pacing(0, 10));
    const [a, b] = numbers;
    const onlyB = b.groups.slice(0, 3);
    // The segment has A (connected, so the campaign may be created) but only B reaches its groups.
    const seg = await segment(t, [a.id, b.id], onlyB);
    expect((await t("POST", `/api/simulator/channels/${b.id}/state`, { health: "banned" })).status).toBe(200);
    const id = await campaign(t, seg);
    const paused = await until(
      () => info(t, id),
      (r) => r.json.status === "paused",
    );
    expect(paused.json).toMatchObject({ pause_reason: "channel_offline", groups: { sent: 0, pending: 3, failed: 0 } });
    expect(await log(t, id)).toEqual([]);
    expect((await t("POST", `/api/simulator/channels/${b.id}/state`, { connected: true })).status).toBe(200);
    expect((await finished(t, id)).json).toMatchObject({ status: "completed", groups: { sent: 3, pending: 0, failed: 0 } });
    expect(byChannel(await log(t, id))).toEqual({ [b.id]: 3 });
  });
});

describe("budgets at the claim", () => {
  it("a daily cap of 5: exactly 5 sends, the number capped until the next 00:00 in Brasília, the campaign paused as channel_limits", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1, { ...pacing(0, 10), number_health: { daily_message_cap: 5 } });
    const [a] = numbers;
    const groups = a.groups.slice(0, 8);
    const id = await campaign(t, await segment(t, [a.id], groups));
    const paused = await until(
      () => info(t, id),
      (r) => r.json.status === "paused",
    );
    expect(paused.json).toMatchObject({ pause_reason: "channel_limits", groups: { total: 8, sent: 5, pending: 3, failed: 0 } });
    const channel = (await t("GET", `/api/external/info-channel/${a.id}`)).json;
    expect(channel.health).toMatchObject({ state: "capped", sent_today: 5, daily_cap: 5 });
    expect(new Date(channel.health.until).getTime()).toBe(nextBrasiliaMidnight(new Date()).getTime());
    // A while later still 5: nothing passes the cap.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await log(t, id)).length).toBe(5);
    expect((await info(t, id)).json.groups.sent).toBe(5);
  });

  it("a number's own cap of 5 (limits): its other groups fail over to the number beside it; exactly 5 through it", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2, pacing(0, 10));
    const [a, b] = numbers;
    expect((await t("PUT", `/api/external/edit-channel/${a.id}`, { name: "Número 1", limits: { daily_message_cap: 5 } })).status).toBe(200);
    const groups = a.groups.slice(0, 14);
    await joinAsAdmin(t, groups, b.phone);
    const id = await campaign(t, await segment(t, [a.id, b.id], groups));
    expect((await finished(t, id)).json).toMatchObject({ status: "completed", groups: { sent: 14, failed: 0 } });
    const messages = await log(t, id);
    expectOncePerGroup(messages, groups);
    expect(byChannel(messages)).toEqual({ [a.id]: 5, [b.id]: 9 });
    expect((await t("GET", `/api/external/info-channel/${a.id}`)).json.health).toMatchObject({ state: "capped", sent_today: 5 });
  });

  it("a new Brasília day restarts a number's group creations as well as its sends (its first send of the day carries none of yesterday's)", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1, pacing(0, 10));
    const [a] = numbers;
    // Yesterday the number sent 4 messages and created 3 groups.
    const yesterday = brasiliaDay(new Date(Date.now() - 86_400_000));
    await (await getServices()).db.update(channels).set({ usageDay: yesterday, sentToday: 4, groupsCreatedToday: 3 }).where(eq(channels.id, a.id));
    expect((await t("GET", `/api/external/info-channel/${a.id}`)).json.health).toMatchObject({ sent_today: 0, groups_created_today: 0 });
    const id = await campaign(t, await segment(t, [a.id], a.groups.slice(0, 2)));
    expect((await finished(t, id)).json.groups).toMatchObject({ sent: 2, failed: 0 });
    expect((await t("GET", `/api/external/info-channel/${a.id}`)).json.health).toMatchObject({ sent_today: 2, groups_created_today: 0 });
  });

  it("min_send_gap_seconds 1 holds across two campaigns on one number (zero pacing, no queue)", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1, { ...pacing(0, 10), queue: { concurrent_mode: "enabled" } });
    const [a] = numbers;
    expect((await t("PUT", `/api/external/edit-channel/${a.id}`, { name: "Número 1", limits: { min_send_gap_seconds: 1 } })).status).toBe(200);
    const first = await campaign(t, await segment(t, [a.id], a.groups.slice(0, 3)), "Primeira");
    const second = await campaign(t, await segment(t, [a.id], a.groups.slice(3, 6)), "Segunda");
    for (const id of [first, second]) expect((await finished(t, id, 40_000)).json.groups).toMatchObject({ sent: 3, failed: 0 });
    const all = [...(await log(t, first)), ...(await log(t, second))].map((m) => new Date(m.sent_at).getTime()).sort((x, y) => x - y);
    expect(all).toHaveLength(6);
    const gaps = all.slice(1).map((at, i) => at - all[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000);
  });
});
