/**
 * Launches (docs/decisions.md#launches) through the REST facade: create-launch, edit-launch,
 * launch-groups, info-launch, the launch's segment, and the launch engine making the next group.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchGroups, outboxEvents, segmentGroups, simulatorGroups, simulatorParticipants } from "../../db/schema";
import { LaunchRunner } from "../../inngest/in-process/launch-runner";
import { applyRestatus } from "../../server/launches/launch/restatus-groups";
import { wakeLaunch } from "../../server/launches/launch/wake";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let api: Api;
let runner: LaunchRunner;

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url, { channelLimit: 100 });
  // Long interval: the passes these tests see come from wake-ups.
  runner = new LaunchRunner(await getServices(), { intervalMs: 60_000 }).start();
});
afterAll(async () => {
  await runner.stop();
  await server.close();
});

async function channel(t: Api = api) {
  const { json } = await t("POST", "/api/external/create-channel", { name: "Canal do lançamento" });
  return json.id_channel as string;
}

const template = { name: "Turma 7 #{n}", description: "Grupo oficial da Turma 7", admins_only: true, admins: ["5511900000001"] };

async function createLaunch(body: Record<string, unknown>, t: Api = api) {
  const res = await t("POST", "/api/external/create-launch", body);
  if (res.status !== 201) throw new Error(`create-launch: ${res.status} ${res.text}`);
  return res.json;
}

const unknownLaunch = "launch_00000000-0000-4000-8000-000000000000";

/** A person's visit of the public join link (the test server serves /g/ as the production server does). */
function link(slug: string) {
  return fetch(`${server.url}/g/${slug}`, {
    redirect: "manual",
    headers: { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148" },
  });
}

describe("create-launch", () => {
  it("creates the launch, its first group from the template and its segment (201)", async () => {
    const ch = await channel();
    const res = await api("POST", "/api/external/create-launch", {
      name: "Turma 7",
      id_channel: [ch],
      group_template: template,
      capacity: 5,
      margin: 1,
      initial_groups: 1,
    });
    expect(res.status).toBe(201);
    const body = res.json;
    expect(body).toMatchObject({ success: true, name: "Turma 7", status: "active", capacity: 5, margin: 1 });
    expect(body.id_launch).toMatch(/^launch_[0-9a-f-]{36}$/);
    expect(body.id_segment).toMatch(/^segment_[0-9a-f-]{36}$/);
    expect(body.join_url).toBe(`${new URL(body.join_url).origin}/g/${body.slug}`);
    expect(body.groups).toHaveLength(1);
    expect(body.groups[0]).toMatchObject({ position: 1, id_channel: ch, name: "Turma 7 #1", status: "filling", clicks: 0 });
    expect(body.groups[0].invite_url).toMatch(/^https:\/\/chat\.whatsapp\.com\/\S+$/);

    const info = (await api("GET", `/api/external/info-launch/${body.id_launch}`)).json;
    expect(info.current_group).toEqual({ position: 1, id_group: body.groups[0].id_group, name: "Turma 7 #1", invite_url: body.groups[0].invite_url });
    expect(info.totals).toEqual({
      groups: 1,
      members: body.groups[0].members,
      unique_members: 0,
      clicks: 0,
      unique_clicks: 0,
      joins: 0,
      leaves: 0,
      leads: 0,
      leads_joined: 0,
      welcomes_sent: 0,
      buyers_removed: 0,
      buyers_in_groups: 0,
    });
    expect(info.welcome).toBeNull();
    expect(info.buyers).toEqual({ remove_from_groups: false, dry_run: false });
    expect(info.moderation).toMatchObject({ mode: "off", block_links: true, strikes_to_remove: 3, country_codes: null });
    expect(info.group_template).toEqual(template);

    // The group is in the channel's groups (the provider made it) and in the launch's segment.
    const listed = (await api("GET", `/api/external/list-groups/${ch}`)).json.groups as { id_group: string; name: string }[];
    expect(listed).toContainEqual(expect.objectContaining({ id_group: body.groups[0].id_group, name: "Turma 7 #1" }));
    const db = await getDb();
    const inSegment = await db.select().from(segmentGroups).where(eq(segmentGroups.segmentId, body.id_segment));
    expect(inSegment.map((g) => g.groupId)).toEqual([body.groups[0].id_group]);
    // The simulator holds the template's description and admins-only, and the admin promoted.
    const [made] = await db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, body.groups[0].id_group));
    expect(made).toMatchObject({ name: "Turma 7 #1", description: template.description, adminsOnly: true });
    const people = await db.select().from(simulatorParticipants).where(eq(simulatorParticipants.groupId, body.groups[0].id_group));
    expect(people).toContainEqual(expect.objectContaining({ participant: template.admins[0], admin: true }));
    expect(body.groups[0].members).toBe(people.length);

    // A group_created group_activity event went to the outbox.
    const events = await db
      .select()
      .from(outboxEvents)
      .where(and(eq(outboxEvents.tenantId, api.tenantId), eq(outboxEvents.type, "group_activity")));
    expect(events.map((e) => (e.payload as { data: Record<string, unknown> }).data)).toContainEqual({
      event: "group_created",
      id_launch: body.id_launch,
      id_group: body.groups[0].id_group,
      name: "Turma 7 #1",
      position: 1,
      invite_url: body.groups[0].invite_url,
    });
  });

  it("a campaign can target the launch's segment", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Campanha da turma", id_channel: [ch], group_template: template, initial_groups: 2 });
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Aviso",
      id_segment: launch.id_segment,
      message_type: "text",
      message: "Aula hoje às 20h",
    });
    expect(res.status).toBe(201);
    const info = (await api("GET", `/api/external/info-campaign/${res.json.id_campaign}`)).json;
    expect(info).toMatchObject({ id_segment: launch.id_segment, segment_name: "Campanha da turma", groups: { total: 2 } });
  });

  it("edit-segment on a launch's segment renames it but refuses groups or id_channel (400 naming the field), leaving its groups", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Turma segmento", id_channel: [ch], group_template: template, initial_groups: 2 });
    const seg = `/api/external/edit-segment/${launch.id_segment}`;
    const groups = await api("PUT", seg, { groups: [launch.groups[0].id_group] });
    expect(expectEnvelope(groups, 400, "Bad Request")).toMatchObject({ code: "launch_segment", message: expect.stringMatching(/^groups: .*launch-groups/) });
    const channels = await api("PUT", seg, { id_channel: [ch] });
    expect(expectEnvelope(channels, 400, "Bad Request")).toMatchObject({ code: "launch_segment", message: expect.stringMatching(/^id_channel: /) });
    const renamed = await api("PUT", seg, { name: "Turma segmento (avisos)" });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ name: "Turma segmento (avisos)", total_groups: 2 });
    // Another segment of the same tenant is edited as before.
    const other = await api("POST", "/api/external/create-segment", { name: "Outro", id_channel: [ch], groups: [launch.groups[0].id_group] });
    expect(other.status).toBe(201);
    expect((await api("PUT", `/api/external/edit-segment/${other.json.id_segment}`, { groups: [launch.groups[1].id_group] })).status).toBe(200);
  });

  it("slugs: generated from the name, -2 when taken, 409 for a taken explicit slug, random for a short name", async () => {
    const ch = await channel();
    const base = { id_channel: [ch], group_template: template, initial_groups: 0 };
    const suffix = Math.random().toString(36).slice(2, 8);
    const a = await createLaunch({ ...base, name: `Lançamento Março ${suffix}!` });
    expect(a.slug).toBe(`lancamento-marco-${suffix}`);
    const b = await createLaunch({ ...base, name: `Lançamento Março ${suffix}` });
    expect(b.slug).toBe(`lancamento-marco-${suffix}-2`);
    const taken = await api("POST", "/api/external/create-launch", { ...base, name: "Outro", slug: a.slug });
    expect(expectEnvelope(taken, 409, "Conflict").message).toContain("slug");
    const short = await createLaunch({ ...base, name: "É!" });
    expect(short.slug).toMatch(/^[a-z0-9]{10}$/);
    // Unique across the service: another tenant cannot take it either.
    const other = await newTenant(server.url);
    const theirs = await other("POST", "/api/external/create-launch", { ...base, id_channel: [await channel(other)], name: "X", slug: a.slug });
    expectEnvelope(theirs, 409, "Conflict");
  });

  it("a slug once used stays its launch's: the old link leads to it under the same rules, and it is 409 for every other launch, of any tenant", async () => {
    const ch = await channel();
    const suffix = Math.random().toString(36).slice(2, 8);
    const old = `antigo-${suffix}`;
    const launch = await createLaunch({ name: "Renomeado", slug: old, id_channel: [ch], group_template: template, initial_groups: 1 });
    const path = `/api/external/edit-launch/${launch.id_launch}`;
    const renamed = `novo-${suffix}`;
    const edited = await api("PUT", path, { slug: renamed });
    expect(edited.json).toMatchObject({ slug: renamed, join_url: launch.join_url.replace(old, renamed) });

    // Ads still carry the old link: it sends to the same launch's group and counts on it, as the new one does.
    const invite = launch.groups[0].invite_url;
    for (const slug of [old, renamed]) {
      const res = await link(slug);
      expect([res.status, res.headers.get("location")], slug).toEqual([302, invite]);
    }
    expect((await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json.totals.clicks).toBe(2);
    await api("PUT", path, { status: "paused", closed_url: "https://example.com/espera" });
    expect((await link(old)).headers.get("location")).toBe("https://example.com/espera");

    // 409 for anyone else: another tenant's create and edit, and another launch of the same tenant.
    const other = await newTenant(server.url);
    const theirChannel = await channel(other);
    for (const slug of [old, renamed]) {
      const taken = await other("POST", "/api/external/create-launch", {
        name: "Deles",
        slug,
        id_channel: [theirChannel],
        group_template: template,
        initial_groups: 0,
      });
      const body = expectEnvelope(taken, 409, "Conflict");
      expect(body.code).toBe("slug_taken");
      expect(body.message).toContain("slug");
    }
    const theirs = await createLaunch({ name: "Deles", id_channel: [theirChannel], group_template: template, initial_groups: 0 }, other);
    expect(expectEnvelope(await other("PUT", `/api/external/edit-launch/${theirs.id_launch}`, { slug: old }), 409, "Conflict").code).toBe("slug_taken");
    const mine = await createLaunch({ name: "Outra minha", id_channel: [ch], group_template: template, initial_groups: 0 });
    expectEnvelope(await api("PUT", `/api/external/edit-launch/${mine.id_launch}`, { slug: old }), 409, "Conflict");
    // Still this launch's link after all those attempts.
    expect((await link(old)).headers.get("location")).toBe("https://example.com/espera");
    // A slug generated from a name skips the old slug too.
    expect((await createLaunch({ name: `Antigo ${suffix}`, id_channel: [ch], group_template: template, initial_groups: 0 })).slug).toBe(`${old}-2`);
    // The launch itself may take its old slug back; the other one keeps leading to it.
    expect((await api("PUT", path, { slug: old, status: "active" })).json.slug).toBe(old);
    expect((await link(renamed)).headers.get("location")).toBe(invite);
  });

  it("closed_url: https only, at most 2,048 characters once normalised (400 naming it); stored, answered and sent in its normalised form", async () => {
    const ch = await channel();
    const base = { name: "Espera", id_channel: [ch], group_template: template, initial_groups: 0 };
    const refused = [
      "http://example.com/espera",
      "javascript:alert(1)",
      "ftp://example.com/espera",
      "//example.com/espera",
      "example.com/espera",
      "https://",
      `https://example.com/${"a".repeat(2030)}`,
      // 320 characters as sent, 2,720 once each "€" is percent-encoded.
      `https://example.com/${"€".repeat(300)}`,
      "https://example.com/\u0000",
    ];
    for (const closed_url of refused) {
      const res = await api("POST", "/api/external/create-launch", { ...base, closed_url });
      expect(expectEnvelope(res, 400, "Bad Request").message, closed_url.slice(0, 40)).toContain("closed_url");
    }
    const launch = await createLaunch({ ...base, closed_url: " https://Exemplo.COM:443/espera/€?turma=ção#topo " });
    const normalised = "https://exemplo.com/espera/%E2%82%AC?turma=%C3%A7%C3%A3o#topo";
    expect((await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json.closed_url).toBe(normalised);

    const path = `/api/external/edit-launch/${launch.id_launch}`;
    for (const closed_url of refused) {
      expect(expectEnvelope(await api("PUT", path, { closed_url }), 400, "Bad Request").message, closed_url.slice(0, 40)).toContain("closed_url");
    }
    const edited = await api("PUT", path, { status: "paused", closed_url: "https://exemplo.com/lista/ñ" });
    expect(edited.json.closed_url).toBe("https://exemplo.com/lista/%C3%B1");
    const res = await link(launch.slug);
    expect([res.status, res.headers.get("location")]).toEqual([302, "https://exemplo.com/lista/%C3%B1"]);
    // Exactly 2,048 characters once normalised is accepted.
    const longest = `https://example.com/${"b".repeat(2048 - "https://example.com/".length)}`;
    expect((await api("PUT", path, { closed_url: longest })).json.closed_url).toBe(longest);
  });

  it("400 naming the field for bad input", async () => {
    const ch = await channel();
    const base = { name: "X", id_channel: [ch], group_template: template, initial_groups: 0 };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, capacity: 2000 }, "capacity"],
      [{ ...base, margin: 300 }, "margin"],
      [{ ...base, capacity: 10, margin: 10 }, "margin"],
      [{ ...base, slug: "AB" }, "slug"],
      [{ ...base, reserve: 9 }, "reserve"],
      [{ ...base, initial_groups: 21 }, "initial_groups"],
      [{ ...base, group_template: { ...template, admins: ["+55 11 9"] } }, "group_template.admins.0"],
      [{ ...base, group_template: { ...template, image_url: "http://example.com/a.png" } }, "group_template.image_url"],
      [{ ...base, id_channel: [] }, "id_channel"],
    ];
    for (const [body, field] of cases) {
      expect(expectEnvelope(await api("POST", "/api/external/create-launch", body), 400, "Bad Request").message).toContain(field);
    }
  });

  it("404 for another tenant's channel; 503 and nothing created when no channel is connected", async () => {
    const other = await newTenant(server.url);
    const theirs = await channel(other);
    expectEnvelope(await api("POST", "/api/external/create-launch", { name: "X", id_channel: [theirs], group_template: template }), 404, "Not Found");

    const t = await newTenant(server.url);
    const ch = await channel(t);
    await t("POST", `/api/simulator/channels/${ch}/state`, { connected: false });
    const res = await t("POST", "/api/external/create-launch", { name: "Offline", id_channel: [ch], group_template: template });
    expectEnvelope(res, 503, "Service Unavailable");
    const db = await getDb();
    const { launches } = await import("../../db/schema");
    expect(await db.select().from(launches).where(eq(launches.tenantId, t.tenantId))).toHaveLength(0);
  });

  it("Idempotency-Key: a replay answers the same launch", async () => {
    const ch = await channel();
    const body = { name: "Idempotente", id_channel: [ch], group_template: template, initial_groups: 0 };
    const key = `launch-${Math.random()}`;
    const first = await api("POST", "/api/external/create-launch", body, { "idempotency-key": key });
    const again = await api("POST", "/api/external/create-launch", body, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect(again.json.id_launch).toBe(first.json.id_launch);
  });
});

describe("edit-launch and info-launch", () => {
  it("edits any field but id_launch, join_url and id_segment (400 naming them); answers like info-launch", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Editável", id_channel: [ch], group_template: template, initial_groups: 1, capacity: 5, margin: 1 });
    const path = `/api/external/edit-launch/${launch.id_launch}`;
    for (const field of ["join_url", "id_segment"]) {
      expect(expectEnvelope(await api("PUT", path, { [field]: "x" }), 400, "Bad Request").message).toContain(field);
    }
    expect(expectEnvelope(await api("PUT", path, { id_launch: unknownLaunch }), 400, "Bad Request").message).toContain("id_launch");
    expect(expectEnvelope(await api("PUT", path, { margin: 5 }), 400, "Bad Request").message).toContain("margin");

    const res = await api("PUT", path, {
      name: "Editado",
      status: "paused",
      closed_url: "https://example.com/encerrado",
      group_template: { name: "Nova #{n}" },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      success: true,
      id_launch: launch.id_launch,
      name: "Editado",
      status: "paused",
      closed_url: "https://example.com/encerrado",
      id_segment: launch.id_segment,
      join_url: launch.join_url,
      current_group: null,
    });
    // A partial template keeps the rest.
    expect(res.json.group_template).toEqual({ ...template, name: "Nova #{n}" });
    const again = await api("PUT", path, { status: "active", closed_url: null });
    expect(again.json).toMatchObject({ status: "active", closed_url: null, current_group: { position: 1 } });

    // A new slug changes the join link; a taken one is 409.
    const other = await createLaunch({ name: "Outra", id_channel: [ch], group_template: template, initial_groups: 0 });
    expectEnvelope(await api("PUT", path, { slug: other.slug }), 409, "Conflict");
    const slug = `novo-${Math.random().toString(36).slice(2, 8)}`;
    expect((await api("PUT", path, { slug })).json.join_url).toBe(launch.join_url.replace(launch.slug, slug));
  });

  it("another tenant's launch is 404 on every path", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Minha", id_channel: [ch], group_template: template, initial_groups: 0 });
    const other = await newTenant(server.url);
    for (const id of [launch.id_launch, unknownLaunch]) {
      expectEnvelope(await other("GET", `/api/external/info-launch/${id}`), 404, "Not Found");
      expectEnvelope(await other("PUT", `/api/external/edit-launch/${id}`, { name: "Hack" }), 404, "Not Found");
      expectEnvelope(await other("POST", `/api/external/launch-groups/${id}`, { create: 1 }), 404, "Not Found");
    }
    expect((await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json.name).toBe("Minha");
  });
});

describe("launch-groups", () => {
  it("creates from the template and adopts existing groups, appended in order and added to the segment", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Grupos", id_channel: [ch], group_template: template, initial_groups: 1 });
    const existing = (await api("GET", `/api/external/list-groups/${ch}`)).json.groups as { id_group: string; name: string }[];
    const adoptable = existing.filter((g) => g.id_group !== launch.groups[0].id_group).slice(0, 2);
    const res = await api("POST", `/api/external/launch-groups/${launch.id_launch}`, {
      create: 1,
      adopt: { id_channel: ch, groups: adoptable.map((g) => g.id_group) },
    });
    expect(res.status).toBe(200);
    const groups = res.json.groups as { position: number; id_group: string; name: string; status: string }[];
    expect(groups.map((g) => [g.position, g.name])).toEqual([
      [1, "Turma 7 #1"],
      [2, "Turma 7 #2"],
      [3, adoptable[0].name],
      [4, adoptable[1].name],
    ]);
    expect(groups.map((g) => g.status)).toEqual(["filling", "reserve", "reserve", "reserve"]);
    const db = await getDb();
    const inSegment = await db.select().from(segmentGroups).where(eq(segmentGroups.segmentId, launch.id_segment));
    expect(inSegment.map((g) => g.groupId).sort()).toEqual(groups.map((g) => g.id_group).sort());

    // Adopting a group again is a no-op; a group not in the channel, or a channel not in the launch, is 400.
    const again = await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { adopt: { id_channel: ch, groups: [adoptable[0].id_group] } });
    expect(again.json.groups).toHaveLength(4);
    const otherChannel = await channel();
    const foreign = (await api("GET", `/api/external/list-groups/${otherChannel}`)).json.groups[0].id_group;
    expect(
      expectEnvelope(await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { adopt: { id_channel: ch, groups: [foreign] } }), 400, "Bad Request")
        .message,
    ).toContain(foreign);
    expect(
      expectEnvelope(
        await api("POST", `/api/external/launch-groups/${launch.id_launch}`, { adopt: { id_channel: otherChannel, groups: [foreign] } }),
        400,
        "Bad Request",
      ).message,
    ).toContain("adopt.id_channel");
    expectEnvelope(await api("POST", `/api/external/launch-groups/${launch.id_launch}`, {}), 400, "Bad Request");
  });
});

describe("the launch engine", () => {
  /**
   * Emulates what the participant events do once they are recorded (server/groups/members/record-participants.ts,
   * branch funnel16): the group's members change, the statuses follow, the engine is woken.
   */
  async function setMembers(launchId: string, position: number, members: number) {
    const db = await getDb();
    await db.transaction(async (tx) => {
      await tx
        .update(launchGroups)
        .set({ members })
        .where(and(eq(launchGroups.launchId, launchId), eq(launchGroups.position, position)));
      await applyRestatus(tx, launchId);
    });
    wakeLaunch(launchId);
  }

  it("creates group 2 from the template once group 1 is full (capacity 5, margin 1: 4 members)", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Motor", id_channel: [ch], group_template: template, capacity: 5, margin: 1, reserve: 1, initial_groups: 1 });
    // Below 80 % of capacity − margin (4): nothing to make.
    await setMembers(launch.id_launch, 1, 3);
    await runner.pass();
    expect((await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json.groups).toHaveLength(1);

    await setMembers(launch.id_launch, 1, 4);
    const info = await waitFor("group 2", async () => {
      const r = (await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json;
      return r.groups.length >= 2 && r;
    });
    expect(info.groups.map((g: { name: string; status: string }) => [g.name, g.status])).toEqual([
      ["Turma 7 #1", "full"],
      ["Turma 7 #2", "filling"],
    ]);
    expect(info.current_group).toMatchObject({ position: 2, name: "Turma 7 #2" });
    const db = await getDb();
    const inSegment = await db.select().from(segmentGroups).where(eq(segmentGroups.segmentId, launch.id_segment));
    expect(inSegment).toHaveLength(2);
    // Another pass makes nothing more: group 2 is empty.
    await runner.pass();
    expect((await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json.groups).toHaveLength(2);
  });

  it("makes the reserve group once the filling group passes 80 % (capacity 11, margin 1: at 8 members)", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Reserva", id_channel: [ch], group_template: template, capacity: 11, margin: 1, reserve: 1, initial_groups: 1 });
    await setMembers(launch.id_launch, 1, 8);
    const info = await waitFor("the reserve group", async () => {
      const r = (await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json;
      return r.groups.length >= 2 && r;
    });
    expect(info.groups.map((g: { status: string }) => g.status)).toEqual(["filling", "reserve"]);
    expect(info.current_group.position).toBe(1);
  });

  it("leaves paused launches, auto_create false and launches without groups alone", async () => {
    const ch = await channel();
    const paused = await createLaunch({ name: "Pausado", id_channel: [ch], group_template: template, capacity: 5, margin: 1, status: "paused" });
    const manual = await createLaunch({ name: "Manual", id_channel: [ch], group_template: template, capacity: 5, margin: 1, auto_create: false });
    const empty = await createLaunch({ name: "Vazio", id_channel: [ch], group_template: template, initial_groups: 0 });
    await setMembers(paused.id_launch, 1, 4);
    await setMembers(manual.id_launch, 1, 4);
    await runner.pass();
    for (const l of [paused, manual]) expect((await api("GET", `/api/external/info-launch/${l.id_launch}`)).json.groups).toHaveLength(1);
    expect((await api("GET", `/api/external/info-launch/${empty.id_launch}`)).json.groups).toHaveLength(0);
  });

  // Through the simulator's participants and the recorded participant events.
  it("four simulated joins fill group 1 and the next visitor's group 2 is made by the engine", async () => {
    const ch = await channel();
    const launch = await createLaunch({ name: "Fluxo", id_channel: [ch], group_template: template, capacity: 5, margin: 1, initial_groups: 1 });
    const members = launch.groups[0].members as number;
    const join = await api("POST", `/api/simulator/groups/${encodeURIComponent(launch.groups[0].id_group)}/participants`, { join: 4 - members });
    expect(join.status).toBeLessThan(300);
    const info = await waitFor("group 2", async () => {
      const r = (await api("GET", `/api/external/info-launch/${launch.id_launch}`)).json;
      return r.groups.length >= 2 && r;
    });
    expect(info.groups[1]).toMatchObject({ position: 2, name: "Turma 7 #2", status: "filling" });
    expect(info.current_group.position).toBe(2);
  });
});
