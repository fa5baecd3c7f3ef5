/**
 * A launch's welcome (CONTRACT §8 "Welcome"; docs/launches.md#welcome) through the REST facade and the simulator: the
 * welcome on create-launch / edit-launch / info-launch (400 naming the field), one message per batch of newcomers with
 * their mentions (after_joins, or max_wait_minutes with the runner's clock moved on), staff and the tenant's own numbers
 * never welcomed, a batch left `sending` by a process that died neither repeated nor dropped, `welcomes_sent`.
 * The restart of a real server process (SIGKILL mid-send) is launch-welcome-crash.test.ts (PostgreSQL).
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchWelcomes } from "../../db/schema";
import { WelcomeRunner } from "../../inngest/in-process/welcome-runner";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let api: Api;
let runner: WelcomeRunner;
/** The runner's clock: tests move it on to make max_wait_minutes pass. */
let offsetMs = 0;

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url, { channelLimit: 20 });
  runner = new WelcomeRunner(await getServices(), { intervalMs: 200, clock: () => new Date(Date.now() + offsetMs) }).start();
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
});

const enc = encodeURIComponent;
const template = { name: "Turma {n}", admins_only: false, admins: ["5511900000001"] };

async function channel() {
  const id = (await api("POST", "/api/external/create-channel", { name: "Número" })).json.id_channel as string;
  const phone = (await api("GET", `/api/external/info-channel/${id}`)).json.phone as string;
  return { id, phone };
}

async function createLaunch(body: Record<string, unknown>) {
  const res = await api("POST", "/api/external/create-launch", { name: "Boas-vindas", group_template: template, ...body });
  expect(res.status, res.text).toBe(201);
  return res.json as { id_launch: string; groups: { id_group: string }[] };
}

async function join(groupId: string, people: string[]) {
  const res = await api("POST", `/api/simulator/groups/${enc(groupId)}/participants`, { join: people });
  expect(res.status, res.text).toBe(200);
}

interface LoggedMessage {
  text: string;
  mentions: string[];
  id_channel: string;
  delivery_key: string;
}

const messagesOf = async (groupId: string) => (await api("GET", `/api/simulator/messages?id_group=${enc(groupId)}`)).json.messages as LoggedMessage[];
const infoLaunch = async (id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json;

const people = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `55119${prefix}${String(i).padStart(4, "0")}`);

describe("welcome settings", () => {
  it("create-launch and edit-launch take the welcome (defaults filled), info-launch answers it; bad input is 400 naming the field", async () => {
    const ch = await channel();
    const launch = await createLaunch({ id_channel: [ch.id], welcome: { text: "{Oi|Olá}, bem-vindos ao {{grupo}}!" } });
    const info = await infoLaunch(launch.id_launch);
    expect(info.welcome).toEqual({ text: "{Oi|Olá}, bem-vindos ao {{grupo}}!", after_joins: 10, max_wait_minutes: 10, mention_new: true });
    expect(info.totals.welcomes_sent).toBe(0);

    const path = `/api/external/edit-launch/${launch.id_launch}`;
    for (const [welcome, field] of [
      [{ text: "Oi", after_joins: 0 }, "welcome.after_joins"],
      [{ text: "Oi", after_joins: 101 }, "welcome.after_joins"],
      [{ text: "Oi", max_wait_minutes: 121 }, "welcome.max_wait_minutes"],
      [{ text: "" }, "welcome.text"],
      [{ text: "x".repeat(1001) }, "welcome.text"],
      [{ text: "Oi {{nome}}" }, "welcome.text"],
      [{ text: "Oi {a|b" }, "welcome.text"],
      [{ text: "Oi", mention_new: "sim" }, "welcome.mention_new"],
    ] as const) {
      const res = await api("PUT", path, { welcome });
      expectEnvelope(res, 400, "Bad Request");
      expect(res.json.message, JSON.stringify(welcome)).toContain(field);
    }
    const bad = await api("POST", "/api/external/create-launch", {
      name: "X",
      id_channel: [ch.id],
      group_template: template,
      welcome: { text: "Oi", after_joins: 500 },
    });
    expectEnvelope(bad, 400, "Bad Request");
    expect(bad.json.message).toContain("welcome.after_joins");

    const edited = await api("PUT", path, { welcome: { text: "Oi", after_joins: 5, max_wait_minutes: 3, mention_new: false } });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.json.welcome).toEqual({ text: "Oi", after_joins: 5, max_wait_minutes: 3, mention_new: false });
    expect((await api("PUT", path, { welcome: null })).json.welcome).toBeNull();
    expect((await infoLaunch(launch.id_launch)).welcome).toBeNull();
  });
});

describe("welcome batches", () => {
  it("three joins with after_joins 3 are ONE message mentioning the three, through the group's number; welcomes_sent counts it", async () => {
    const ch = await channel();
    const launch = await createLaunch({ id_channel: [ch.id], welcome: { text: "Bem-vindos ao {{grupo}}!", after_joins: 3, max_wait_minutes: 120 } });
    const group = launch.groups[0].id_group;
    const newcomers = people("1", 3);
    await join(group, newcomers.slice(0, 2));
    await join(group, newcomers.slice(2));
    const [welcome] = await waitFor("the welcome", async () => {
      const m = await messagesOf(group);
      return m.length > 0 && m;
    });
    expect(welcome.mentions).toEqual(newcomers);
    expect(welcome.id_channel).toBe(ch.id);
    expect(welcome.text).toBe(`Bem-vindos ao Turma 1!\n\n${newcomers.map((p) => `@${p}`).join(" ")}`);
    await waitFor("welcomes_sent", async () => (await infoLaunch(launch.id_launch)).totals.welcomes_sent === 1);
    // Two more joins: not a batch yet (after_joins 3, max_wait 120 minutes); nothing more is sent.
    await join(group, people("2", 2));
    await runner.pass();
    await runner.pass();
    expect(await messagesOf(group)).toHaveLength(1);
  });

  it("max_wait_minutes after the first waiting join, a batch of fewer goes (the runner's clock moved on); mention_new false: no @ and no mentions", async () => {
    const ch = await channel();
    const launch = await createLaunch({ id_channel: [ch.id], welcome: { text: "Olá!", after_joins: 10, max_wait_minutes: 5, mention_new: false } });
    const group = launch.groups[0].id_group;
    await join(group, people("3", 2));
    await runner.pass();
    expect(await messagesOf(group)).toHaveLength(0);
    offsetMs = 4 * 60_000;
    await runner.pass();
    expect(await messagesOf(group)).toHaveLength(0);
    offsetMs = 5 * 60_000 + 1000;
    try {
      const [welcome] = await waitFor("the welcome after max_wait_minutes", async () => {
        const m = await messagesOf(group);
        return m.length > 0 && m;
      });
      expect(welcome).toMatchObject({ text: "Olá!", mentions: [] });
      await runner.pass();
      expect(await messagesOf(group)).toHaveLength(1);
      expect((await infoLaunch(launch.id_launch)).totals.welcomes_sent).toBe(1);
    } finally {
      offsetMs = 0;
    }
  });

  it("the template's admins, staff_numbers, the launch's numbers and the tenant's other numbers are not welcomed", async () => {
    const a = await channel();
    const b = await channel();
    // Staff typed with the ninth digit joins as the platform reports it, without (the phone codec matches them).
    const staff = "553187654321";
    const launch = await createLaunch({
      id_channel: [a.id, b.id],
      staff_numbers: ["5531987654321"],
      welcome: { text: "Oi!", after_joins: 2, max_wait_minutes: 120 },
    });
    const group = launch.groups[0].id_group;
    // The launch's second number leaves and comes back: its join is recorded (staff), never welcomed.
    const left = await api("POST", `/api/simulator/groups/${enc(group)}/participants`, { leave: [b.phone, "5511900000001"] });
    expect(left.status, left.text).toBe(200);
    // Another of the tenant's numbers, not in the launch (a backup joined by hand): not welcomed either.
    const c = await channel();
    await join(group, [b.phone, "5511900000001", staff, c.phone]);
    const [lead] = people("4", 1);
    await join(group, [lead]);
    await runner.pass();
    await runner.pass();
    expect(await messagesOf(group)).toHaveLength(0);
    const [second] = people("5", 1);
    await join(group, [second]);
    const [welcome] = await waitFor("the welcome of two leads", async () => {
      const m = await messagesOf(group);
      return m.length > 0 && m;
    });
    expect(welcome.mentions).toEqual([lead, second]);
    expect(welcome.text).toBe(`Oi!\n\n@${lead} @${second}`);
  });

  it("a welcome is one of the number's sends: it counts against daily_message_cap, and at the cap the next batch waits", async () => {
    const ch = await channel();
    const capped = await api("PUT", `/api/external/edit-channel/${ch.id}`, { name: "Número", limits: { daily_message_cap: 1 } });
    expect(capped.status, capped.text).toBe(200);
    const launch = await createLaunch({ id_channel: [ch.id], welcome: { text: "Oi!", after_joins: 1, max_wait_minutes: 120 } });
    const group = launch.groups[0].id_group;
    await join(group, people("8", 1));
    await waitFor("the first welcome", async () => (await messagesOf(group)).length === 1);
    const health = await waitFor("the number at its cap", async () => {
      const h = (await api("GET", `/api/external/info-channel/${ch.id}`)).json.health;
      return h.state === "capped" && h;
    });
    expect(health.sent_today).toBe(1);
    await join(group, people("9", 1));
    await runner.pass();
    await runner.pass();
    expect(await messagesOf(group)).toHaveLength(1);
    expect((await infoLaunch(launch.id_launch)).totals.welcomes_sent).toBe(1);
  });

  it("a batch left `sending` by a process that died is looked up, not sent again; one whose send never reached the platform is sent once", async () => {
    const ch = await channel();
    const launch = await createLaunch({ id_channel: [ch.id], welcome: { text: "Oi!", after_joins: 1, max_wait_minutes: 120 } });
    const group = launch.groups[0].id_group;
    const db = await getDb();
    const [first] = people("6", 1);
    await join(group, [first]);
    await waitFor("the first welcome", async () => (await infoLaunch(launch.id_launch)).totals.welcomes_sent === 1);
    // As if the process died after the platform took the message and before the send was recorded: the lease ran out.
    const expired = new Date(Date.now() - 60_000);
    await db
      .update(launchWelcomes)
      .set({ state: "sending", messageId: null, sentAt: null, attemptAt: expired, leaseUntil: expired })
      .where(eq(launchWelcomes.launchId, launch.id_launch));
    expect((await infoLaunch(launch.id_launch)).totals.welcomes_sent).toBe(0);
    await runner.pass();
    await waitFor("the batch found sent", async () => (await infoLaunch(launch.id_launch)).totals.welcomes_sent === 1);
    expect(await messagesOf(group)).toHaveLength(1);

    // A batch claimed by a process that died before its send reached the platform: sent once, after the look-up.
    await runner.stop();
    try {
      const [second] = people("7", 1);
      await join(group, [second]);
      const made = await runWelcomePassWithChannelOffline(ch.id, launch.id_launch);
      expect(made.state).toBe("pending");
      await db
        .update(launchWelcomes)
        .set({ state: "sending", channelId: ch.id, attemptAt: expired, leaseUntil: expired })
        .where(and(eq(launchWelcomes.launchId, launch.id_launch), eq(launchWelcomes.state, "pending")));
    } finally {
      runner = new WelcomeRunner(await getServices(), { intervalMs: 200, clock: () => new Date(Date.now() + offsetMs) }).start();
    }
    await waitFor("the second welcome", async () => (await infoLaunch(launch.id_launch)).totals.welcomes_sent === 2, 20_000);
    const log = await messagesOf(group);
    expect(log).toHaveLength(2);
    expect(new Set(log.map((m) => m.delivery_key)).size).toBe(2);
  });
});

/** One pass while the channel is offline: the batch is made and stays pending (no number can send). */
async function runWelcomePassWithChannelOffline(channelId: string, launchId: string) {
  const off = await api("POST", `/api/simulator/channels/${channelId}/state`, { connected: false });
  expect(off.status, off.text).toBe(200);
  const { runWelcomes } = await import("../../server/launches/funnel/run-welcomes");
  const { db, provider } = await getServices();
  await waitFor("the channel offline", async () => (await api("GET", `/api/external/info-channel/${channelId}`)).json.status === "disconnected");
  await runWelcomes(db, provider, new Date(), launchId);
  const on = await api("POST", `/api/simulator/channels/${channelId}/state`, { connected: true });
  expect(on.status, on.text).toBe(200);
  await waitFor("the channel online", async () => (await api("GET", `/api/external/info-channel/${channelId}`)).json.status === "connected");
  const [row] = await (await getDb())
    .select()
    .from(launchWelcomes)
    .where(and(eq(launchWelcomes.launchId, launchId), eq(launchWelcomes.state, "pending")));
  return row;
}
