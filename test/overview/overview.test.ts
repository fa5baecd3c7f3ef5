/**
 * The dashboard's overview (docs/dashboard.md#overview) over /api/trpc with a real session cookie, as
 * the home page calls it: its figures are what was done through the REST API, the simulator and the
 * join link; another account's campaigns, numbers, launches and webhooks never appear in it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { WebhookRunner } from "../../inngest/in-process/webhook-runner";
import { getServices } from "../../server/services";
import type { Overview } from "../../server/overview/schema";
import { brasiliaMinute } from "../campaigns";
import { apiFor, request, until, waitFor, type Api, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { signedInUser } from "../oauth-client";
import { startReceiver, type Receiver } from "../webhooks/receiver";

process.env.WEBHOOK_ALLOW_PRIVATE = "1";
process.env.WEBHOOK_RETRY_SCHEDULE = "60000";

let server: TestServer;
let runner: InProcessRunner;
let webhooks: WebhookRunner;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer();
  receiver = await startReceiver();
  receiver.respond({ status: 500 });
  const services = await getServices();
  runner = new InProcessRunner(services, { maxSleepMs: 50 }).start();
  webhooks = new WebhookRunner(services.db, { maxSleepMs: 50 }).start();
});
afterAll(async () => {
  await webhooks.stop();
  await runner.stop();
  await receiver.close();
  await server.close();
});

interface Account {
  api: Api;
  cookie: string;
}

async function account(): Promise<Account> {
  const u = await signedInUser(server.url);
  const api = apiFor(server.url, u.tenantId, u.apiKey);
  expect((await api("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
  return { api, cookie: u.cookie };
}

async function overview(a: Account): Promise<Overview> {
  const res = await request(server.url, "GET", "/api/trpc/overview.get", undefined, { cookie: a.cookie });
  expect(res.status, res.text).toBe(200);
  return res.json.result.data as Overview;
}

async function channelWithSegment(api: Api, name: string, groupCount: number) {
  const { json: ch } = await api("POST", "/api/external/create-channel", { name });
  const groups = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.slice(0, groupCount).map((g: { id_group: string }) => g.id_group);
  const { json: seg } = await api("POST", "/api/external/create-segment", { name: `Seg ${name}`, id_channel: [ch.id_channel], groups });
  return { channel: ch.id_channel as string, segment: seg.id_segment as string };
}

async function campaign(api: Api, name: string, segment: string, extra: Record<string, unknown> = {}) {
  const res = await api("POST", "/api/external/create-campaign/message", { name, id_segment: segment, message: "Olá!", ...extra });
  expect(res.status, res.text).toBe(201);
  return res.json.id_campaign as string;
}

/** A tenant's day: a campaign sent, one scheduled, one paused, a number banned, another offline, a launch with a click and a join, webhooks failing. */
async function busyDay(a: Account) {
  const { api } = a;
  expect((await api("PATCH", "/api/external/edit-webhooks", { campaign_status_url: receiver.url })).status).toBe(200);
  const main = await channelWithSegment(api, "Canal Principal", 4);
  const capped = await api("PUT", `/api/external/edit-channel/${main.channel}`, { name: "Canal Principal", limits: { daily_message_cap: 100 } });
  expect(capped.status, capped.text).toBe(200);
  const sent = await campaign(api, "Enviada hoje", main.segment);
  await until(
    () => api("GET", `/api/external/info-campaign/${sent}`),
    (r) => r.json.status === "completed",
  );
  const tomorrow = brasiliaMinute(new Date(Date.now() + 86_400_000));
  const later = brasiliaMinute(new Date(Date.now() + 2 * 86_400_000));
  const scheduled = await campaign(api, "Agendada amanhã", main.segment, { scheduled_at: tomorrow });
  const paused = await campaign(api, "Pausada", main.segment, { scheduled_at: later });
  expect((await api("POST", `/api/external/pause-campaign/${paused}`)).status).toBe(200);

  const banned = await channelWithSegment(api, "Canal Banido", 1);
  expect((await api("POST", `/api/simulator/channels/${banned.channel}/state`, { health: "banned" })).status).toBe(200);
  const offline = await channelWithSegment(api, "Canal Offline", 1);
  expect((await api("POST", `/api/simulator/channels/${offline.channel}/state`, { connected: false })).status).toBe(200);

  const launch = await api("POST", "/api/external/create-launch", {
    name: "Turma Hoje",
    id_channel: [main.channel],
    group_template: { name: "Turma Hoje #{n}", admins_only: false, admins: [] },
    capacity: 50,
    margin: 1,
    initial_groups: 1,
  });
  expect(launch.status, launch.text).toBe(201);
  const click = await fetch(`${server.url}/g/${launch.json.slug}`, {
    redirect: "manual",
    headers: { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148" },
  });
  expect(click.status).toBe(302);
  const code = new URL(launch.json.groups[0].invite_url).pathname.slice(1);
  const joined = await api("POST", `/api/simulator/invites/${encodeURIComponent(code)}/join`, { participant: "5511987650001" });
  expect(joined.status, joined.text).toBe(200);
  return { main, banned, offline, sent, scheduled, paused, launch: launch.json.id_launch as string };
}

describe("overview.get", () => {
  it("shows what was done: sends per number and hour, the scheduled and paused campaigns, the launch's click and join, the banned number, the failing webhooks", async () => {
    const a = await account();
    const day = await busyDay(a);
    const o = await waitFor("the launch's click and join and a failing webhook in the overview", async () => {
      const v = await overview(a);
      const l = v.launches[0];
      return l?.clicks_today === 1 && l.joins_today === 1 && v.attention.some((x) => x.kind === "webhooks_failing") && v;
    });

    // Today's sends: the 4 groups of the sent campaign, on its number, in this hour (Brasília).
    expect(o.sends_today.total).toBe(4);
    expect(o.sends_today.by_hour).toHaveLength(24);
    const hour = Number(new Intl.DateTimeFormat("en-GB", { timeZone: "America/Sao_Paulo", hour: "2-digit", hourCycle: "h23" }).format(new Date()));
    expect(o.sends_today.by_hour[hour] + o.sends_today.by_hour[(hour + 23) % 24]).toBe(4);
    expect(o.numbers.map((n) => [n.name, n.sent_today])).toEqual([
      ["Canal Principal", 4],
      ["Canal Banido", 0],
      ["Canal Offline", 0],
    ]);
    expect(o.numbers[0].daily_cap).toBe(100);
    expect(o.numbers[1].health_state).toBe("banned");

    // The completed campaign is in neither list; the paused one is under way, the scheduled one next.
    expect(o.campaigns.active.map((c) => [c.id_campaign, c.status, c.pause_reason])).toEqual([[day.paused, "paused", "user"]]);
    expect(o.campaigns.scheduled.map((c) => c.id_campaign)).toEqual([day.scheduled]);
    expect(o.campaigns.scheduled[0]).toMatchObject({ name: "Agendada amanhã", status: "pending", groups: { total: 4, sent: 0, pending: 4, failed: 0 } });

    // The launch: today's click and join, its group's members, the last 7 days ending today.
    expect(o.launches).toHaveLength(1);
    expect(o.launches[0]).toMatchObject({ id_launch: day.launch, name: "Turma Hoje", status: "active", clicks_today: 1, joins_today: 1, groups: 1 });
    expect(o.launches[0].members).toBeGreaterThanOrEqual(1);
    expect(o.launches[0].days).toHaveLength(7);
    expect(o.launches[0].days[6]).toEqual({ date: o.today, clicks: 1, joins: 1 });

    // What needs attention: the banned number, the paused campaign, the campaign_status webhooks answered 500.
    const kinds = o.attention.map((x) => [x.kind, x.id, x.state]);
    expect(kinds).toContainEqual(["number", day.banned.channel, "banned"]);
    expect(kinds).toContainEqual(["campaign_paused", day.paused, "user"]);
    expect(kinds).toContainEqual(["channel_offline", day.offline.channel, "disconnected"]);
    const failing = o.attention.find((x) => x.kind === "webhooks_failing");
    expect(failing).toMatchObject({ id: "campaign_status", detail: "HTTP 500" });
    // Each campaign_status event the receiver refused is one failing delivery (it never got a 2xx).
    const refused = new Set(receiver.received.map((r) => r.headers["webhook-id"])).size;
    expect(failing?.count).toBeGreaterThanOrEqual(1);
    expect(failing?.count).toBeLessThanOrEqual(refused);
    // One line per problem: the banned number is not also listed as a disconnected channel.
    expect(o.attention.filter((x) => x.kind !== "webhooks_failing")).toHaveLength(3);
  }, 120_000);

  it("never shows another account's data, and answers 401 without a session", async () => {
    const a = await account();
    const b = await account();
    await busyDay(a);
    const bOwn = await channelWithSegment(b.api, "Canal do B", 2);
    await campaign(b.api, "Campanha do B", bOwn.segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 86_400_000)) });

    const seenByB = await overview(b);
    expect(seenByB.numbers.map((n) => n.name)).toEqual(["Canal do B"]);
    expect(seenByB.campaigns.active).toEqual([]);
    expect(seenByB.campaigns.scheduled.map((c) => c.name)).toEqual(["Campanha do B"]);
    expect(seenByB.launches).toEqual([]);
    expect(seenByB.attention).toEqual([]);
    expect(seenByB.sends_today.total).toBe(0);

    const seenByA = await overview(a);
    expect(JSON.stringify(seenByA)).not.toContain("Canal do B");
    expect(JSON.stringify(seenByA)).not.toContain("Campanha do B");

    // No session: refused; an API key is not a dashboard session.
    expect((await request(server.url, "GET", "/api/trpc/overview.get")).status).toBe(401);
    expect((await request(server.url, "GET", "/api/trpc/overview.get", undefined, { "x-api-key": a.api.key })).status).toBe(401);
  }, 120_000);
});
