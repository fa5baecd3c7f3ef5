/**
 * The launch funnel with MESSAGING_PROVIDER=evolution against the fake gateway (docs/launches.md,
 * docs/evolution.md#groups-for-launches): create-launch makes the group on the gateway and reads its
 * invite code; the join link redirects there; the gateway's `group-participants.update` webhooks (one
 * participant a LID) move the members; a full group makes the engine create the next one on the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LaunchRunner } from "../../inngest/in-process/launch-runner";
import { checkInviteLinks } from "../../server/launches/link/invite-health";
import { runLaunchEngine } from "../../server/launches/launch/launch-engine";
import { nextBrasiliaMidnight } from "../../server/numbers/budget";
import type { Services } from "../../server/services";
import { newTenant, until, type Api } from "../helpers";
import type { FakeEvolution } from "../fake-evolution";
import type { TestServer } from "../http-server";
import { startEvolutionService } from "../evolution-service";

let fake: FakeEvolution;
let server: TestServer;
let runner: LaunchRunner;
let api: Api;
let services: Services;

beforeAll(async () => {
  const started = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000", EVOLUTION_RECONCILE_AFTER_SECONDS: "1" } });
  ({ fake, server, services } = started);
  runner = new LaunchRunner(services, { intervalMs: 60_000 }).start();
  api = await newTenant(server.url, { channelLimit: 10 });
});
afterAll(async () => {
  await runner.stop();
  await server.close();
  await fake.close();
});

async function connectedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo lançamento" });
  await fake.pair(json.id_channel);
  await until(
    async () => (await api("PUT", `/api/external/edit-channel/${json.id_channel}`, { name: "Evo lançamento" })).json.status,
    (s) => s === "connected",
  );
  return json.id_channel as string;
}

const info = async (id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json;

it("a launch on Evolution: group made on the gateway, link to its invite code, joins with a LID counted, the next group made when full", async () => {
  const ch = await connectedChannel();
  const res = await api("POST", "/api/external/create-launch", {
    name: "Turma Evo",
    id_channel: [ch],
    group_template: { name: "Turma Evo #{n}", description: "Grupo oficial", admins_only: true, admins: ["5511900000001"] },
    capacity: 5,
    margin: 1,
    initial_groups: 1,
  });
  expect(res.status).toBe(201);
  const launch = res.json;
  const first = launch.groups[0];
  expect(first).toMatchObject({ position: 1, name: "Turma Evo #1" });
  const onGateway = fake.group(ch, first.id_group);
  expect(onGateway?.subject).toBe("Turma Evo #1");
  expect(first.invite_url).toMatch(/^https:\/\/chat\.whatsapp\.com\/\w+$/);

  // The join link sends people to the group's invite code on the gateway.
  const link = await fetch(`${server.url}/g/${launch.slug}`, { redirect: "manual" });
  expect(link.status).toBe(302);
  expect(link.headers.get("location")).toBe(first.invite_url);

  // People join through it: one arrives as a LID the gateway could not resolve (kept opaque), one as a number.
  const membersBefore = first.members as number;
  await fake.groupJoin(ch, first.id_group, ["987654321012345@lid", "5511944445555"]);
  const afterJoin = await until(
    () => info(launch.id_launch),
    (i) => i.totals.joins === 2,
  );
  expect(afterJoin.totals).toMatchObject({ joins: 2, unique_members: 2, members: membersBefore + 2 });
  const csv = await (await fetch(`${server.url}/api/external/launch-members/${launch.id_launch}?format=csv`, { headers: { "x-api-key": api.key } })).text();
  expect(csv).toContain("987654321012345@lid");
  expect(csv).toContain("5511944445555");

  // Fill group 1 (capacity 5 − margin 1): the engine makes group 2 on the gateway and the link moves there.
  const missing = 4 - (membersBefore + 2);
  if (missing > 0)
    await fake.groupJoin(
      ch,
      first.id_group,
      Array.from({ length: missing }, (_, i) => `55119777700${String(i).padStart(2, "0")}`),
    );
  const withSecond = await until(
    () => info(launch.id_launch),
    (i) => i.groups.length >= 2 && i.groups[1].invite_url,
    30_000,
  );
  expect(withSecond.groups[0].status).toBe("full");
  expect(withSecond.groups[1]).toMatchObject({ position: 2, name: "Turma Evo #2", status: "filling" });
  expect(fake.group(ch, withSecond.groups[1].id_group)?.subject).toBe("Turma Evo #2");
  const next = await until(
    async () => (await fetch(`${server.url}/g/${launch.slug}`, { redirect: "manual" })).headers.get("location"),
    (l) => l === withSecond.groups[1].invite_url,
    5_000,
  );
  expect(next).toBe(withSecond.groups[1].invite_url);
});

// docs/evolution.md#group-creation-that-never-duplicates, through the API and the launch engine, against the
// fake in its default mode: every failure inside group/create is Evolution's 500, made or not.
describe("launch groups on Evolution are never made twice", () => {
  beforeAll(() => runner.stop()); // passes are run by hand below, one at a time
  const template = (name: string) => ({ name, description: "Grupo oficial", admins_only: true, admins: ["5511900000001"] });
  const subject = (name: string, n: number) => name.replace("{n}", String(n));
  const posts = (ch: string, name: string) => fake.createRequests.filter((r) => r.instance === ch && r.subject === name).length;
  /** A launch whose one group is full at once (capacity 2: the number and the admin), so the engine's next pass makes #2. */
  const fullLaunch = async (ch: string, name: string) => {
    const res = await api("POST", "/api/external/create-launch", {
      name,
      id_channel: [ch],
      group_template: template(name),
      capacity: 2,
      margin: 0,
      reserve: 0,
    });
    expect(res.status).toBe(201);
    return res.json;
  };
  const pass = (now = new Date()) => runLaunchEngine(services.db, services.provider, now);
  /** Closed launches make no groups: each test leaves the engine nothing to do. */
  const close = async (...launches: { id_launch: string }[]) => {
    for (const l of launches) expect((await api("PUT", `/api/external/edit-launch/${l.id_launch}`, { status: "closed" })).status).toBe(200);
  };

  it("create-launch whose create is answered 500 after WhatsApp made the group: 201, one group, adopted and set up, not broken", async () => {
    const ch = await connectedChannel();
    const name = `Turma A ${Date.now()} #{n}`;
    fake.failCreate({ message: "Error: Timed Out", after: true });
    const res = await api("POST", "/api/external/create-launch", { name: "A", id_channel: [ch], group_template: template(name), capacity: 50, margin: 0 });
    expect(res.status).toBe(201);
    expect(res.json.groups).toHaveLength(1);
    const onGateway = fake.groupsNamed(ch, subject(name, 1));
    expect(onGateway.map((g) => g.id)).toEqual([res.json.groups[0].id_group]);
    expect(posts(ch, subject(name, 1))).toBe(1);
    // What the 500 left undone is done: description, the admin promoted, admins-only; the invite link read.
    expect(onGateway[0]).toMatchObject({ desc: "Grupo oficial", announce: true });
    expect(onGateway[0].participants?.find((p) => p.id === "5511900000001@s.whatsapp.net")?.admin).toBe("admin");
    expect(res.json.groups[0].invite_url).toMatch(/^https:\/\/chat\.whatsapp\.com\//);
    // The group lists the number by its LID (never learned here): still ours at the hourly check.
    expect(await checkInviteLinks(services.db, services.provider, new Date(), { all: true })).toMatchObject({ broken: 0 });
    expect((await info(res.json.id_launch)).groups[0].status).toBe("filling");
  });

  it("a group that lists the number by LID (every new group) is not broken at the invite check", async () => {
    const ch = await connectedChannel();
    const name = `Turma L ${Date.now()} #{n}`;
    const res = await api("POST", "/api/external/create-launch", { name: "L", id_channel: [ch], group_template: template(name), capacity: 50, margin: 0 });
    expect(res.status).toBe(201);
    const g = fake.group(ch, res.json.groups[0].id_group)!;
    expect(g.participants?.[0].id).toMatch(/@lid$/);
    const check = await checkInviteLinks(services.db, services.provider, new Date(), { all: true });
    expect(check).toMatchObject({ broken: 0 });
    expect((await info(res.json.id_launch)).groups[0].status).toBe("filling");
  });

  it("the engine: a lost answer, a connection closed and a rate-overlimit 500 after WhatsApp made the group each leave one group, in the launch", async () => {
    const ch = await connectedChannel();
    for (const fail of ["lost", "Connection Closed", "Error: rate-overlimit"]) {
      const name = `Turma E ${fail.slice(0, 4)} ${Date.now()} #{n}`;
      const launch = await fullLaunch(ch, name);
      if (fail === "lost") fake.knobs.loseCreateAnswers = 1;
      else fake.failCreate({ message: fail, after: true });
      expect(await pass()).toBe(1);
      const groups = (await info(launch.id_launch)).groups;
      expect(groups.map((g: { name: string }) => g.name)).toEqual([subject(name, 1), subject(name, 2)]);
      expect(fake.groupsNamed(ch, subject(name, 2)).map((g) => g.id)).toEqual([groups[1].id_group]);
      expect(posts(ch, subject(name, 2))).toBe(1);
      await close(launch);
    }
  });

  it("a rate-limited creation is reported as such (503 group_create_rate_limited); the number then makes no group for an hour, by request or engine", async () => {
    const ch = await connectedChannel();
    // create-launch: the caller is told, and nothing is kept.
    const name = `Turma R ${Date.now()} #{n}`;
    fake.failCreate({ message: "Error: rate-overlimit", after: false });
    const refused = await api("POST", "/api/external/create-launch", { name: "R", id_channel: [ch], group_template: template(name), capacity: 50, margin: 0 });
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ success: false, code: "group_create_rate_limited" });
    expect(fake.groupsNamed(ch, subject(name, 1))).toEqual([]);
    // Asked again at once: refused without a word to the gateway (CONTRACT §7: at least 1 h after a rate-limit answer).
    const sent = fake.createRequests.filter((r) => r.instance === ch).length;
    const again = await api("POST", "/api/external/create-launch", { name: "R", id_channel: [ch], group_template: template(name), capacity: 50, margin: 0 });
    expect(again.status).toBe(503);
    expect(again.json).toMatchObject({ success: false, code: "group_create_rate_limited" });
    expect(fake.createRequests.filter((r) => r.instance === ch).length).toBe(sent);

    // The engine: two launches on one number need a group; WhatsApp throttles the first creation: the pass makes no other,
    // and nothing is tried on that number within the hour (explicit clock), then both are made.
    const ch2 = await connectedChannel();
    const one = await fullLaunch(ch2, `Turma R1 ${Date.now()} #{n}`);
    const two = await fullLaunch(ch2, `Turma R2 ${Date.now()} #{n}`);
    const before = fake.createRequests.filter((r) => r.instance === ch2).length;
    fake.failCreate({ message: "Error: rate-overlimit", after: false, times: 10 });
    const t0 = new Date();
    expect(await pass(t0)).toBe(0);
    expect(fake.createRequests.filter((r) => r.instance === ch2).length).toBe(before + 1);
    fake.knobs.createFailures = [];
    for (const min of [1, 5, 30, 59]) expect(await pass(new Date(t0.getTime() + min * 60_000))).toBe(0);
    expect(fake.createRequests.filter((r) => r.instance === ch2).length).toBe(before + 1);
    expect(await pass(new Date(t0.getTime() + 60 * 60_000 + 1000))).toBe(2);
    for (const l of [one, two]) expect((await info(l.id_launch)).groups).toHaveLength(2);
    await close(one, two);

    // Throttled after making the group: adopted, and the pass stops there too.
    const ch3 = await connectedChannel();
    const three = await fullLaunch(ch3, `Turma R3 ${Date.now()} #{n}`);
    const four = await fullLaunch(ch3, `Turma R4 ${Date.now()} #{n}`);
    const mid = fake.createRequests.filter((r) => r.instance === ch3).length;
    fake.failCreate({ message: "Error: rate-overlimit", after: true });
    expect(await pass()).toBe(1);
    expect(fake.createRequests.filter((r) => r.instance === ch3).length).toBe(mid + 1);
    expect((await info(three.id_launch)).groups).toHaveLength(2); // the oldest goes first
    expect((await info(four.id_launch)).groups).toHaveLength(1);
    expect(fake.groupsNamed(ch3, (await info(three.id_launch)).groups[1].name)).toHaveLength(1);
    await close(three, four);
  });
});

// CONTRACT §7 "Launches on several numbers" on the real gateway's terms (docs/launches.md#several-numbers): the
// backoff's real schedule, with an explicit clock, and a creation whose outcome is unknown kept on its number.
describe("launch creations on Evolution: backoff and numbers", () => {
  beforeAll(() => runner.stop()); // passes are run by hand below, with a clock
  const template = (name: string) => ({ name, description: "Grupo oficial", admins_only: false, admins: ["5511900000001"] });
  const pass = (now: Date) => runLaunchEngine(services.db, services.provider, now);
  const posts = (ch: string) => fake.createRequests.filter((r) => r.instance === ch).length;
  const at = (t0: Date, minutes: number, seconds = 0) => new Date(t0.getTime() + minutes * 60_000 + seconds * 1000);

  it("failures in a row put the launch's creations off 5, 10, 20, 40, then 60 minutes: one attempt each time, none in between", async () => {
    const ch = await connectedChannel();
    const name = `Turma B ${Date.now()} #{n}`;
    // Full at once (capacity 2: the number and the admin): the engine's pass makes #2.
    const res = await api("POST", "/api/external/create-launch", {
      name: "B",
      id_channel: [ch],
      group_template: template(name),
      capacity: 2,
      margin: 0,
      reserve: 0,
    });
    expect(res.status).toBe(201);
    fake.failCreate({ message: "Connection Closed", after: false, times: 100 });
    const t0 = new Date();
    const start = posts(ch);
    expect(await pass(t0)).toBe(0);
    expect(posts(ch)).toBe(start + 1);
    // [minute of the next attempt, the wait before it]: 5, 10, 20, 40, 60, 60.
    let last = 0;
    for (const [attempt, next] of [5, 15, 35, 75, 135, 195].entries()) {
      for (const probe of [last + 1, next - 1]) await pass(at(t0, probe, 59));
      expect(posts(ch), `no attempt before minute ${next}`).toBe(start + 1 + attempt);
      await pass(at(t0, next));
      expect(posts(ch), `one attempt at minute ${next}`).toBe(start + 2 + attempt);
      last = next;
    }
    fake.knobs.createFailures = [];
    expect(await pass(at(t0, 255))).toBe(1);
    expect((await info(res.json.id_launch)).groups).toHaveLength(2);
    expect((await api("PUT", `/api/external/edit-launch/${res.json.id_launch}`, { status: "closed" })).status).toBe(200);
  });

  it("a creation whose outcome is unknown stays on its number: the other number makes nothing meanwhile, and the group is found, not made twice", async () => {
    const [a, b] = [await connectedChannel(), await connectedChannel()];
    const name = `Turma U ${Date.now()} #{n}`;
    // #1 by a; full at once (capacity 3: both numbers and the admin), so the next pass makes #2, b's turn.
    const res = await api("POST", "/api/external/create-launch", {
      name: "U",
      id_channel: [a, b],
      group_template: template(name),
      capacity: 3,
      margin: 0,
      reserve: 0,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.groups.map((g: { id_channel: string }) => g.id_channel)).toEqual([a]);
    // b's answer is lost and its groups cannot be listed: WhatsApp may have made #2.
    fake.knobs.loseCreateAnswers = 1;
    fake.knobs.rateLimitGroups = true;
    const t0 = new Date();
    expect(await pass(t0)).toBe(0);
    fake.knobs.rateLimitGroups = false;
    const second = name.replace("{n}", "2");
    expect(fake.groupsNamed(b, second)).toHaveLength(1);
    // b may not create again today (its cap is the one creation it spent): a, whose turn it is not, makes nothing either.
    await setCreateCap(b, 1);
    const fromA = posts(a);
    // Still today in Brasília (a run started shortly before its midnight would otherwise see b's count start again).
    const today = (minutes: number) => new Date(Math.min(at(t0, minutes).getTime(), nextBrasiliaMidnight(t0).getTime() - 1000));
    expect(await pass(today(6))).toBe(0);
    expect(await pass(today(30))).toBe(0);
    expect(posts(a)).toBe(fromA);
    // The next Brasília day b asks again: its earlier group is found and kept.
    expect(await pass(at(nextBrasiliaMidnight(t0), 1))).toBe(1);
    const groups = (await info(res.json.id_launch)).groups;
    expect(groups.map((g: { id_channel: string; name: string }) => [g.id_channel, g.name])).toEqual([
      [a, name.replace("{n}", "1")],
      [b, second],
    ]);
    expect(fake.groupsNamed(b, second).map((g) => g.id)).toEqual([groups[1].id_group]);
    expect(fake.groupsNamed(a, second)).toEqual([]);
    expect((await api("PUT", `/api/external/edit-launch/${res.json.id_launch}`, { status: "closed" })).status).toBe(200);
  });
});

/** A channel's `group_create_cap` of its own (edit-channel `limits`). */
async function setCreateCap(channelId: string, cap: number) {
  const res = await api("PUT", `/api/external/edit-channel/${channelId}`, { name: "Número do lançamento", limits: { group_create_cap: cap } });
  expect(res.status, res.text).toBe(200);
}
