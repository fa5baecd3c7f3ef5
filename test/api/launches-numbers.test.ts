/**
 * Launches on several numbers (CONTRACT §7 "Launches on several numbers"; docs/launches.md#several-numbers)
 * through the REST facade, the simulator and the launch engine: creation in turn over the launch's channels,
 * every channel (and the template's admins) admin of every group and in the segment with it; each channel's
 * `group_create_cap` per Brasília day, also with two server processes on one PostgreSQL database; the backoff
 * after a failed creation (5 min doubling to 1 h, at least 1 h after a rate-limit answer), which the engine's
 * passes, the join wake-ups and the link's wake-ups all respect; and, when no channel may create, the margin,
 * then `link_broken` with `reason: "group_create_cap"`.
 *
 * The engine's passes past the first minutes are run with an explicit clock (`runLaunchEngine(…, now)`): the
 * real schedule (5 min, 1 h) is kept and the test moves the clock instead of waiting.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { segmentGroupChannels } from "../../db/schema";
import { LaunchRunner } from "../../inngest/in-process/launch-runner";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { nextBrasiliaMidnight } from "../../server/numbers/budget";
import { runLaunchEngine } from "../../server/launches/launch/launch-engine";
import { forgetPublicLink } from "../../server/launches/link/public-link";
import { simulatedOwnNumber } from "../../server/messaging/simulator";
import { getServices, type Services } from "../../server/services";
import { startChildServer, type ChildServer } from "../child-server";
import { expectEnvelope, newTenant, waitFor, type Api, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { groupActivity } from "../launches/fixtures";
import { baseDatabaseUrl } from "../postgres-databases";

let server: TestServer;
let api: Api;
let runner: LaunchRunner;
let services: Services;

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url, { channelLimit: 100 });
  services = await getServices();
  // A long interval: the passes these tests see come from wake-ups (joins, the link) or are run by hand with a clock.
  runner = new LaunchRunner(services, { intervalMs: 3_600_000 }).start();
});
afterAll(async () => {
  await runner.stop();
  await server.close();
});

const ADMIN = "5511900000001";
const template = { name: "Turma N #{n}", description: "Grupo oficial", admins_only: true, admins: [ADMIN] };

interface GroupOut {
  position: number;
  id_group: string;
  id_channel: string;
  name: string;
  invite_url: string;
  members: number;
  status: string;
}

async function channel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Número do lançamento" });
  return json.id_channel as string;
}

async function createLaunch(body: Record<string, unknown>) {
  const res = await api("POST", "/api/external/create-launch", { group_template: template, ...body });
  if (res.status !== 201) throw new Error(`create-launch: ${res.status} ${res.text}`);
  return res.json as { id_launch: string; slug: string; id_segment: string; groups: GroupOut[] };
}

const info = async (id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json as { groups: GroupOut[]; current_group: GroupOut | null };

/** A channel's `group_create_cap` of its own (edit-channel `limits`). */
async function setCreateCap(channelId: string, cap: number) {
  const res = await api("PUT", `/api/external/edit-channel/${channelId}`, { name: "Número do lançamento", limits: { group_create_cap: cap } });
  expect(res.status, res.text).toBe(200);
  expect(res.json.health.group_create_cap).toBe(cap);
}

/** The channel's number as info-channel shows it: its health with today's usage. */
const health = async (channelId: string) => (await api("GET", `/api/external/info-channel/${channelId}`)).json.health;

/** Everyone in a simulated group (GET /api/simulator/groups/{id}/participants). */
async function participants(groupId: string): Promise<{ participant: string; admin: boolean }[]> {
  const res = await api("GET", `/api/simulator/groups/${encodeURIComponent(groupId)}/participants`);
  expect(res.status, res.text).toBe(200);
  return res.json.participants;
}

/** The group creations the simulator was asked for on a channel (made or refused as rate-limited), oldest first. */
async function creations(channelId: string): Promise<{ outcome: "made" | "rate_limited"; id_group: string | null; at: string }[]> {
  const res = await api("GET", `/api/simulator/group-creations?id_channel=${channelId}`);
  expect(res.status, res.text).toBe(200);
  return res.json.creations;
}

/** WhatsApp throttles the channel's group creations past `perHour` made in a rolling hour (null: no limit). */
async function limitCreations(channelId: string, perHour: number | null) {
  const res = await api("POST", `/api/simulator/channels/${channelId}/state`, { group_create_rate_limit_per_hour: perHour });
  expect(res.status, res.text).toBe(200);
  expect(res.json.group_create_rate_limit_per_hour).toBe(perHour);
}

/** `n` people join the group through the simulator (their participant events wake the engine). */
async function join(groupId: string, n: number) {
  const res = await api("POST", `/api/simulator/groups/${encodeURIComponent(groupId)}/participants`, { join: n });
  expect(res.status, res.text).toBe(200);
}

/** A person's visit of the join link (the link's 1 s memory of the launch dropped first). */
async function visit(launchId: string, slug: string) {
  forgetPublicLink(launchId);
  return fetch(`${server.url}/g/${slug}`, { redirect: "manual", headers: { "user-agent": "Mozilla/5.0 (iPhone) Mobile/15E148" } });
}

const pass = (now: Date, launchId?: string) => runLaunchEngine(services.db, services.provider, now, launchId);
const minutes = (from: Date, n: number) => new Date(from.getTime() + n * 60_000);

describe("a launch on two numbers", () => {
  it("creates its groups alternately; every group has both numbers and the template's admin as admins, is listed by both and is in the segment with both", async () => {
    const [a, b] = [await channel(), await channel()];
    const launch = await createLaunch({ name: "Dois números", id_channel: [a, b], capacity: 20, margin: 2, auto_create: false, initial_groups: 2 });
    expect(launch.groups.map((g) => g.id_channel)).toEqual([a, b]);
    const more = await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { create: 3 });
    expect(more.status, more.text).toBe(200);
    const groups = more.json.groups as GroupOut[];
    expect(groups.map((g) => g.id_channel)).toEqual([a, b, a, b, a]);
    expect(groups.map((g) => g.name)).toEqual([1, 2, 3, 4, 5].map((n) => `Turma N #${n}`));

    const listedBy = async (ch: string) =>
      new Set(((await api("GET", `/api/external/list-groups/${ch}`)).json.groups as { id_group: string }[]).map((g) => g.id_group));
    const [byA, byB] = [await listedBy(a), await listedBy(b)];
    const db = await getDb();
    for (const g of groups) {
      // Both numbers and the admin, all admins: the group is reachable by either channel even where only admins post.
      const people = await participants(g.id_group);
      expect(
        people
          .filter((p) => p.admin)
          .map((p) => p.participant)
          .sort(),
      ).toEqual([simulatedOwnNumber(a), simulatedOwnNumber(b), ADMIN].sort());
      expect(g.members).toBe(3);
      expect(byA.has(g.id_group) && byB.has(g.id_group)).toBe(true);
      const reaching = await db
        .select({ channelId: segmentGroupChannels.channelId })
        .from(segmentGroupChannels)
        .where(and(eq(segmentGroupChannels.segmentId, launch.id_segment), eq(segmentGroupChannels.groupId, g.id_group)));
      expect(reaching.map((r) => r.channelId).sort()).toEqual([a, b].sort());
    }
    // A segment of the other number alone accepts the groups the first one made (it reaches them).
    const ofA = groups.filter((g) => g.id_channel === a).map((g) => g.id_group);
    const segment = await api("POST", "/api/external/create-segment", { name: "Só o número B", id_channel: [b], groups: ofA });
    expect(segment.status, segment.text).toBe(201);

    // The engine takes turns too: the next group (the filling one is full) comes from b, after a made #5.
    await api("PUT", `/api/external/edit-launch/${launch.id_launch}`, { auto_create: true, reserve: 0 });
    for (const g of groups) await join(g.id_group, 18 - g.members);
    const next = await waitFor("group 6", async () => {
      const r = await info(launch.id_launch);
      return r.groups.length >= 6 && r.groups[5];
    });
    expect(next).toMatchObject({ position: 6, id_channel: b });
  });

  it("a campaign to the launch's segment sends each group exactly once, spread over both numbers; with one offline the other sends to every group", async () => {
    const t = await newTenant(server.url, { channelLimit: 10 });
    expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
    const [a, b] = [
      (await t("POST", "/api/external/create-channel", { name: "A" })).json.id_channel as string,
      (await t("POST", "/api/external/create-channel", { name: "B" })).json.id_channel as string,
    ];
    const res = await t("POST", "/api/external/create-launch", {
      name: "Campanha em dois números",
      id_channel: [a, b],
      group_template: template,
      auto_create: false,
      initial_groups: 6,
    });
    expect(res.status, res.text).toBe(201);
    const made = new Map((res.json.groups as GroupOut[]).map((g) => [g.id_group, g.id_channel]));
    const dispatch = new InProcessRunner(services, { maxSleepMs: 50 }).start();
    try {
      /** Sends a campaign to the launch and answers its message log once it completed. */
      const send = async (name: string) => {
        const sent = await t("POST", "/api/external/create-campaign/message", { name, id_segment: res.json.id_segment, message: "Hoje às 20h" });
        expect(sent.status, sent.text).toBe(201);
        const id = sent.json.id_campaign as string;
        await waitFor(name, async () => (await t("GET", `/api/external/info-campaign/${id}`)).json.status === "completed", 30_000);
        const log = (await t("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { id_channel: string; id_group: string }[];
        expect(log.map((m) => m.id_group).sort()).toEqual([...made.keys()].sort());
        return log;
      };
      const both = await send("Aula 1");
      expect([a, b].map((ch) => both.filter((m) => m.id_channel === ch).length)).toEqual([3, 3]);
      // With a offline, b sends to every group, a's included: it reaches them all.
      expect((await t("POST", `/api/simulator/channels/${a}/state`, { connected: false })).status).toBe(200);
      const onlyB = await send("Aula 2");
      expect(onlyB.every((m) => m.id_channel === b)).toBe(true);
      expect(onlyB.filter((m) => made.get(m.id_group) === a)).toHaveLength(3);
    } finally {
      await dispatch.stop();
    }
  });

  it("a channel that may not create is skipped: while one is offline and one banned, the third takes every turn; the banned number is not added", async () => {
    const [a, b, c] = [await channel(), await channel(), await channel()];
    expect((await api("POST", `/api/simulator/channels/${a}/state`, { connected: false })).status).toBe(200);
    expect((await api("POST", `/api/simulator/channels/${c}/state`, { health: "banned" })).status).toBe(200);
    const launch = await createLaunch({ name: "Um fora", id_channel: [a, b, c], capacity: 20, margin: 2, auto_create: false, initial_groups: 2 });
    expect(launch.groups.map((g) => g.id_channel)).toEqual([b, b]);
    // a's number is added all the same (a number needs no session to be added to a group); the banned one is not.
    const people = (await participants(launch.groups[0].id_group)).map((p) => p.participant);
    expect(people).toContain(simulatedOwnNumber(a));
    expect(people).not.toContain(simulatedOwnNumber(c));
    expect((await api("POST", `/api/simulator/channels/${a}/state`, { connected: true })).status).toBe(200);
    const more = await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { create: 2 });
    expect((more.json.groups as GroupOut[]).map((g) => g.id_channel)).toEqual([b, b, a, b]);
  });
});

describe("group_create_cap", () => {
  it("holds per channel per Brasília day: the creations stop at each one's cap (429 group_create_cap with Retry-After when none may), and start again at 00:00 in Brasília", async () => {
    const [a, b] = [await channel(), await channel()];
    await setCreateCap(a, 2);
    await setCreateCap(b, 1);
    const launch = await createLaunch({ name: "Teto", id_channel: [a, b], capacity: 10, margin: 2, reserve: 0, auto_create: false, initial_groups: 0 });
    const res = await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { create: 5 });
    expect(res.status, res.text).toBe(200);
    expect((res.json.groups as GroupOut[]).map((g) => g.id_channel)).toEqual([a, b, a]);
    const refusedRes = await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { create: 1 });
    const refused = expectEnvelope(refusedRes, 429, "Too Many Requests");
    expect(refused.code).toBe("group_create_cap");
    // Until 00:00 in Brasília: a positive wait of at most a day.
    const retryAfter = Number(refusedRes.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(refused.message).toContain("00:00");
    // The cap is checked before the platform is asked: nothing was refused there.
    expect((await creations(a)).map((c) => c.outcome)).toEqual(["made", "made"]);
    expect((await creations(b)).map((c) => c.outcome)).toEqual(["made"]);
    expect(await health(a)).toMatchObject({ groups_created_today: 2, group_create_cap: 2 });
    expect(await health(b)).toMatchObject({ groups_created_today: 1, group_create_cap: 1 });

    // Every group full: the engine may not create today (no attempt), and does at the next Brasília day, through b (a made #3).
    await api("PUT", `/api/external/edit-launch/${launch.id_launch}`, { auto_create: true });
    for (const g of res.json.groups as GroupOut[]) await join(g.id_group, 8 - g.members);
    expect(await pass(new Date(), launch.id_launch)).toBe(0);
    expect(await creations(a)).toHaveLength(2);
    const tomorrow = minutes(nextBrasiliaMidnight(new Date()), 1);
    expect(await pass(tomorrow, launch.id_launch)).toBe(1);
    expect((await info(launch.id_launch)).groups.map((g) => g.id_channel)).toEqual([a, b, a, b]);
  });

  it("when no channel may create: the link fills the last group's margin, then the closed page and link_broken with reason group_create_cap", async () => {
    const a = await channel();
    await setCreateCap(a, 1);
    // Full at 4 (capacity 6, margin 2); the number and the admin are 2 of them.
    const launch = await createLaunch({ name: "Sem teto", id_channel: [a], capacity: 6, margin: 2, reserve: 0, initial_groups: 1 });
    const [g1] = launch.groups;
    await join(g1.id_group, 2);
    await waitFor("group 1 full", async () => (await info(launch.id_launch)).groups[0].status === "full");
    await runner.pass();
    // The margin: people still get group 1.
    const onMargin = await visit(launch.id_launch, launch.slug);
    expect(onMargin.status).toBe(302);
    expect(onMargin.headers.get("location")).toBe(g1.invite_url);
    await join(g1.id_group, 2);
    await waitFor("group 1 at capacity", async () => (await info(launch.id_launch)).groups[0].members === 6);
    const closed = await visit(launch.id_launch, launch.slug);
    expect(closed.status).toBe(200);
    expect(await closed.text()).toContain("fechad");
    const broken = (await groupActivity(api.tenantId)).filter((e) => e.event === "link_broken" && e.id_launch === launch.id_launch);
    expect(broken).toEqual([{ event: "link_broken", id_launch: launch.id_launch, reason: "group_create_cap" }]);
    // Not one creation was asked of the platform past the cap.
    expect((await creations(a)).map((c) => c.outcome)).toEqual(["made"]);
    expect((await info(launch.id_launch)).groups).toHaveLength(1);
  });
});

describe("a failed creation is retried with backoff, never in a loop", () => {
  /** A launch on one number whose only group is full (at 4 members: the number, the admin and 2 people), with WhatsApp throttling its creations. */
  async function throttledLaunch(name: string, capacity: number) {
    const a = await channel();
    const launch = await createLaunch({ name, id_channel: [a], capacity, margin: capacity - 4, reserve: 0, initial_groups: 1 });
    await limitCreations(a, 0);
    await join(launch.groups[0].id_group, 2);
    // The joins woke the engine: its one attempt is refused as rate-limited.
    await waitFor("the first attempt", async () => (await creations(a)).length === 2);
    await runner.pass();
    return { a, launch };
  }

  it("a launch whose creations are rate-limited makes at most 2 attempts in 3 minutes; its link keeps answering; an hour later it tries again", async () => {
    const { a, launch } = await throttledLaunch("Limitado", 6);
    const t0 = new Date();
    // Passes every 30 s for 3 minutes, as the engine's timer would run them.
    // Passes of this launch only: another test's launch capped for today may create once the Brasília day turns.
    for (let s = 30; s <= 180; s += 30) expect(await pass(new Date(t0.getTime() + s * 1000), launch.id_launch)).toBe(0);
    const attempts = (await creations(a)).filter((c) => c.outcome === "rate_limited");
    expect(attempts.length).toBeLessThanOrEqual(2);
    expect(attempts).toHaveLength(1);
    // The link keeps answering: the margin of group 1.
    const res = await visit(launch.id_launch, launch.slug);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(launch.groups[0].invite_url);
    // The number cools down (a rate-limit answer), and no group is tried on it before the hour is over.
    expect((await health(a)).state).toBe("cooling");
    expect(await pass(minutes(t0, 59), launch.id_launch)).toBe(0);
    expect(await creations(a)).toHaveLength(2);
    await limitCreations(a, null);
    expect(await pass(minutes(t0, 61), launch.id_launch)).toBe(1);
    expect((await info(launch.id_launch)).groups).toHaveLength(2);
  });

  it("join wake-ups and the link's wake-ups cause no creation attempt during the backoff", async () => {
    const { a, launch } = await throttledLaunch("Acordado", 12);
    const [g1] = launch.groups;
    for (let i = 0; i < 5; i++) {
      // Each join is a participant event that wakes the engine; each visit on the margin wakes it too.
      await join(g1.id_group, 1);
      expect((await visit(launch.id_launch, launch.slug)).status).toBe(302);
      await new Promise((r) => setTimeout(r, 1100));
    }
    // Passes run one at a time: this one runs after every wake-up's.
    await runner.pass();
    expect((await info(launch.id_launch)).groups[0].members).toBe(9);
    expect((await creations(a)).filter((c) => c.outcome === "rate_limited")).toHaveLength(1);
  });
});

// Two processes on one PostgreSQL database: this file's test server and test/child-server.ts in a process of its own.
const onPostgres = Boolean(baseDatabaseUrl());
if (!onPostgres) console.log("[launches-numbers] two processes: skipped on PGlite (one process owns an embedded database; set DATABASE_URL to run it)");

describe("group_create_cap with two server processes on one PostgreSQL database", () => {
  let child: ChildServer;
  beforeAll(async () => {
    if (onPostgres) child = await startChildServer("198.51.100.99");
  }, 90_000);
  afterAll(async () => {
    if (onPostgres) await child.close();
  });

  it.skipIf(!onPostgres)(
    "launch-groups asked at once through both processes never pass the number's cap",
    async () => {
      const a = await channel();
      await setCreateCap(a, 3);
      const launches = [];
      for (let i = 0; i < 4; i++)
        launches.push(await createLaunch({ name: `Dois processos ${i}`, id_channel: [a], capacity: 20, margin: 2, auto_create: false, initial_groups: 0 }));
      const bases = [server.url, child.url];
      const answers = await Promise.all(
        launches.map((l, i) =>
          fetch(`${bases[i % 2]}/api/external/launch-groups/${l.id_launch}`, {
            method: "POST",
            headers: { "x-api-key": api.key, "content-type": "application/json" },
            body: JSON.stringify({ create: 2 }),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as { groups?: GroupOut[]; code?: string } })),
        ),
      );
      const made = answers.reduce((n, r) => n + (r.status === 200 ? (r.body.groups?.length ?? 0) : 0), 0);
      expect(made).toBe(3);
      for (const r of answers) if (r.status !== 200) expect(r.body.code).toBe("group_create_cap");
      expect((await creations(a)).filter((c) => c.outcome === "made")).toHaveLength(3);
      expect(await health(a)).toMatchObject({ groups_created_today: 3, group_create_cap: 3 });
    },
    120_000,
  );
});
