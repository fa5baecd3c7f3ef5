/**
 * A launch's members (docs/decisions.md#members): participant events from the provider, the counts they
 * keep, launch-analytics and launch-members over HTTP, the group_activity webhooks they cause.
 */
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchClicks, launchGroups, launches } from "../../db/schema";
import { checkInviteLinks } from "../../server/launches/link/invite-health";
import { reportMembersChanged } from "../../server/groups/activity/group-activity";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { brasiliaParts } from "../../server/time/brasilia";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant, request, waitFor } from "../helpers";
import { withServerAndReceiver, withWebhookRunner } from "../webhooks/fixtures";
import { webhookHeadersOf } from "../webhooks/receiver";
import { emitParticipants, groupActivity, groupRows, launchWithGroups } from "./fixtures";

const fx = withServerAndReceiver();
afterEach(() => {
  delete process.env.LAUNCH_MEMBERS_REPORT_SECONDS;
});

const ANALYTICS = (id: string, q = "") => `/api/external/launch-analytics/${id}${q}`;
const MEMBERS = (id: string, q = "") => `/api/external/launch-members/${id}${q}`;
const today = () => brasiliaParts(new Date()).date;

describe("participant events", () => {
  it("count everyone in members, leads only in joins; staff, admins and repeats are not leads; a leave lowers members", async () => {
    const l = await launchWithGroups(fx.server.url, { staff: ["+55 11 90000-0001"], admins: ["5511900000002"] });
    const [g1, g2] = l.groups;
    await emitParticipants(l.channel, g1, "join", ["5511999990001", "5511999990002", "5511900000001", "5511900000002"]);
    // The same join reported twice (a gateway retrying its webhook) changes nothing.
    await emitParticipants(l.channel, g1, "join", ["5511999990001"]);
    // One person in two groups, and an opaque id.
    await emitParticipants(l.channel, g2, "join", ["5511999990001", "123456789@lid"]);
    let groups = await groupRows(l.id);
    expect(groups.map((g) => g.members)).toEqual([4, 2]);

    await emitParticipants(l.channel, g1, "leave", ["5511999990002"]);
    await emitParticipants(l.channel, g1, "leave", ["5511999990002"]);
    groups = await groupRows(l.id);
    expect(groups.map((g) => g.members)).toEqual([3, 2]);

    const members = await l.api("GET", MEMBERS(l.id));
    expect(members.status).toBe(200);
    expect(members.json).toMatchObject({ success: true, page: 1, per_page: 500, total: 6 });
    const rows = members.json.members as { participant: string; id_group: string; staff: boolean; left_at: string | null; group_name: string }[];
    expect(rows.filter((r) => r.staff).map((r) => r.participant)).toEqual(["5511900000001", "5511900000002"]);
    const leads = new Set(rows.filter((r) => !r.staff).map((r) => r.participant));
    // 5511999990001 joined two groups: one person.
    expect([...leads].sort()).toEqual(["123456789@lid", "5511999990001", "5511999990002"]);
    expect(rows.find((r) => r.participant === "5511999990002")?.left_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-0[23]:00$/);
    expect(rows.find((r) => r.participant === "123456789@lid")).toMatchObject({ id_group: g2, group_name: "Turma 7 #2", left_at: null });

    const analytics = await l.api("GET", ANALYTICS(l.id, "?days=3"));
    expect(analytics.status).toBe(200);
    const days = analytics.json.days as { date: string; joins: number; leaves: number; members: number }[];
    expect(days.map((d) => d.date).at(-1)).toBe(today());
    expect(days).toHaveLength(3);
    // Leads only: 3 joins in g1 and g2 by 3 lead rows + the repeat person in g2 = 4 lead joins; 1 lead leave.
    expect(days.at(-1)).toMatchObject({ joins: 4, leaves: 1, members: 5 });
    expect(days[0]).toMatchObject({ joins: 0, leaves: 0, members: 0 });
    expect(analytics.json.groups).toEqual([
      { id_group: g1, name: "Turma 7 #1", clicks: 0, joins: 2, leaves: 1, members: 3, buyers: 0 },
      { id_group: g2, name: "Turma 7 #2", clicks: 0, joins: 2, leaves: 0, members: 2, buyers: 0 },
    ]);
  });

  it("a group reaching capacity − margin becomes full once (group_full) and the next one fills; people leaving do not reopen it", async () => {
    const l = await launchWithGroups(fx.server.url, { capacity: 5, margin: 1 });
    const [g1] = l.groups;
    await emitParticipants(l.channel, g1, "join", ["5511999990001", "5511999990002", "5511999990003"]);
    expect((await groupRows(l.id)).map((g) => g.status)).toEqual(["filling", "reserve"]);
    await emitParticipants(l.channel, g1, "join", ["5511999990004"]);
    let groups = await groupRows(l.id);
    expect(groups.map((g) => [g.status, g.members])).toEqual([
      ["full", 4],
      ["filling", 0],
    ]);
    expect(groups[0].fullAt).not.toBeNull();
    await emitParticipants(l.channel, g1, "leave", ["5511999990004", "5511999990003"]);
    await emitParticipants(l.channel, g1, "join", ["5511999990005", "5511999990006"]);
    groups = await groupRows(l.id);
    expect(groups.map((g) => g.status)).toEqual(["full", "filling"]);
    const full = (await groupActivity(l.api.tenantId)).filter((e) => e.event === "group_full");
    expect(full).toEqual([{ event: "group_full", id_launch: l.id, id_group: g1, members: 4 }]);
  });

  it("a leave handled before its join (two webhooks racing) ends with the row closed and members as before", async () => {
    const l = await launchWithGroups(fx.server.url, { groups: 1 });
    const [g1] = l.groups;
    await emitParticipants(l.channel, g1, "join", ["5511999990100"]);
    const start = (await groupRows(l.id))[0].members;
    const joinedAt = new Date(Date.now() - 2000);
    const leftAt = new Date(Date.now() - 1000);
    await emitParticipants(l.channel, g1, "leave", ["5511999990007"], leftAt);
    // Someone never seen leaving (there before the group was adopted, or their join is late): one less.
    expect((await groupRows(l.id))[0].members).toBe(start - 1);
    // The same leave again (a gateway retrying) changes nothing.
    await emitParticipants(l.channel, g1, "leave", ["5511999990007"], leftAt);
    expect((await groupRows(l.id))[0].members).toBe(start - 1);
    await emitParticipants(l.channel, g1, "join", ["5511999990007"], joinedAt);
    expect((await groupRows(l.id))[0].members).toBe(start);
    const rows = (await l.api("GET", MEMBERS(l.id))).json.members as { participant: string; joined_at: string; left_at: string | null }[];
    const row = rows.filter((r) => r.participant === "5511999990007");
    expect(row).toHaveLength(1);
    expect(Date.parse(row[0].joined_at)).toBe(Math.floor(joinedAt.getTime() / 1000) * 1000);
    expect(Date.parse(row[0].left_at ?? "")).toBe(Math.floor(leftAt.getTime() / 1000) * 1000);
    const totals = (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals;
    expect(totals).toMatchObject({ members: start, joins: 2, leaves: 1 });
    // The join again, later than the leave: a new membership.
    await emitParticipants(l.channel, g1, "join", ["5511999990007"]);
    expect((await groupRows(l.id))[0].members).toBe(start + 1);
  });

  it("events arriving together are applied in order: a join and a leave of one person in one batch, repeats, many people", async () => {
    const l = await launchWithGroups(fx.server.url, { groups: 2, capacity: 1000 });
    const [g1, g2] = l.groups;
    const start = (await groupRows(l.id)).map((g) => g.members);
    const people = Array.from({ length: 60 }, (_, i) => `55119888${String(i).padStart(5, "0")}`);
    const t0 = Date.now() - 60_000;
    // Not awaited one by one: they queue behind the write in flight and go together.
    await Promise.all(
      people.flatMap((p, i) => {
        const g = i % 2 ? g2 : g1;
        const events = [emitParticipants(l.channel, g, "join", [p], new Date(t0 + i))];
        if (i % 3 === 0) events.push(emitParticipants(l.channel, g, "leave", [p], new Date(t0 + 1000 + i)));
        // The join repeated (a gateway retrying its webhook), after the leave for some: not a new membership.
        if (i % 5 === 0) events.push(emitParticipants(l.channel, g, "join", [p], new Date(t0 + i)));
        return events;
      }),
    );
    const left = people.filter((_, i) => i % 3 === 0);
    const stay = (g: 0 | 1) => people.filter((_, i) => i % 2 === g && i % 3 !== 0).length;
    const rows = await groupRows(l.id);
    expect(rows.map((r) => r.members)).toEqual([start[0] + stay(0), start[1] + stay(1)]);
    const totals = (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals;
    expect(totals).toMatchObject({ joins: people.length, leaves: left.length });
    const members = (await l.api("GET", MEMBERS(l.id))).json.members as { participant: string; left_at: string | null }[];
    expect(members).toHaveLength(people.length);
    expect(
      members
        .filter((m) => m.left_at !== null)
        .map((m) => m.participant)
        .sort(),
    ).toEqual(left.sort());
  });

  it("the hourly check sets a drifted group's members to the simulator's count, once no event of the group arrived for 10 minutes", async () => {
    const l = await launchWithGroups(fx.server.url, { groups: 1 });
    const [g1] = l.groups;
    const { db, provider } = await getServices();
    // Events the platform never had (as if recorded twice, or its leaves lost): members drifts from the group.
    await emitParticipants(l.channel, g1, "join", ["5511999990401", "5511999990402"]);
    const size = (await provider.groupState(l.channel, g1)).size;
    expect((await groupRows(l.id))[0].members).toBe(2);
    const now = new Date();
    await checkInviteLinks(db, provider, new Date(now.getTime() + 9 * 60_000), { all: true });
    expect((await groupRows(l.id))[0].members).toBe(2);
    await checkInviteLinks(db, provider, new Date(now.getTime() + 10 * 60_000 + 1000), { all: true });
    expect((await groupRows(l.id))[0].members).toBe(size);
  });

  it("an event for a group no launch holds changes nothing", async () => {
    const l = await launchWithGroups(fx.server.url, { groups: 1 });
    await emitParticipants(l.channel, "120363999999999999@g.us", "join", ["5511999990001"]);
    expect((await l.api("GET", MEMBERS(l.id))).json.total).toBe(0);
  });
});

describe("launch-analytics", () => {
  it("one row per day oldest first with zeros; clicks, unique visitors and sources from the click rows; days outside 1–365 become 30", async () => {
    const l = await launchWithGroups(fx.server.url);
    const db = await getDb();
    const now = new Date();
    const day = today();
    await db.insert(launchClicks).values([
      { launchId: l.id, at: now, day, position: 1, visitor: "a", utmSource: "instagram" },
      { launchId: l.id, at: now, day, position: 1, visitor: "a", utmSource: "instagram" },
      { launchId: l.id, at: now, day, position: 2, visitor: "b", utmSource: null },
      { launchId: l.id, at: now, day: "2000-01-01", position: 1, visitor: "c", utmSource: "old" },
    ]);
    const res = await l.api("GET", ANALYTICS(l.id, "?days=7"));
    expect(res.json.days).toHaveLength(7);
    expect(res.json.days.at(-1)).toMatchObject({ date: day, clicks: 3, unique_clicks: 2 });
    expect(res.json.days.slice(0, 6).every((d: { clicks: number }) => d.clicks === 0)).toBe(true);
    const dates = res.json.days.map((d: { date: string }) => d.date);
    expect([...dates].sort()).toEqual(dates);
    expect(res.json.by_source).toEqual([
      { utm_source: "instagram", clicks: 2 },
      { utm_source: null, clicks: 1 },
    ]);
    expect(res.json.groups.map((g: { clicks: number }) => g.clicks)).toEqual([2, 1]);
    for (const q of ["", "?days=0", "?days=366", "?days=abc"]) expect((await l.api("GET", ANALYTICS(l.id, q))).json.days).toHaveLength(30);
    expect((await l.api("GET", ANALYTICS(l.id, "?days=365"))).json.days).toHaveLength(365);
  });

  it("draws no members on the days before the launch existed: an adopted group's members count from the launch's creation day on", async () => {
    const l = await launchWithGroups(fx.server.url);
    const db = await getDb();
    // Created yesterday with groups that already held people (adopted): no join rows explain them.
    await db
      .update(launches)
      .set({ createdAt: new Date(Date.now() - 86_400_000) })
      .where(eq(launches.id, l.id));
    await db.update(launchGroups).set({ members: 6 }).where(eq(launchGroups.launchId, l.id));
    const days = (await l.api("GET", ANALYTICS(l.id, "?days=5"))).json.days as { date: string; members: number }[];
    expect(days).toHaveLength(5);
    expect(days.map((d) => d.members)).toEqual([0, 0, 0, 12, 12]);
  });

  it("another tenant's launch is 404 like a missing one; a malformed id 400; no key 401; a partner token is refused", async () => {
    const l = await launchWithGroups(fx.server.url, { groups: 1 });
    const other = await newTenant(fx.server.url);
    for (const path of [ANALYTICS(l.id), MEMBERS(l.id), MEMBERS(l.id, "?format=csv")]) {
      expectEnvelope(await other("GET", path), 404, "Not Found");
      expectEnvelope(await request(fx.server.url, "GET", path), 401, "Unauthorized");
    }
    expectEnvelope(await other("GET", ANALYTICS(`launch_${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`)), 404, "Not Found");
    const bad = expectEnvelope(await l.api("GET", ANALYTICS("launch_nope")), 400, "Bad Request");
    expect(bad.message).toContain("id_launch");
    const { db, provider } = await getServices();
    const partner = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "partner", tenantId: l.api.tenantId, appId: "a", grantId: "g", scopes: ["statistics:read", "campaigns:read", "settings:read"] },
      now: new Date(),
    });
    await expect(partner.launchStats.members({ id_launch: l.id, format: "json", page: 1, delimiter: "comma" })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(partner.launchStats.analytics({ id_launch: l.id })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});

describe("launch-members", () => {
  it("CSV: a BOM, the header row, one row per join (a re-join is a new row), staff marked, semicolons on request, formulas neutralised", async () => {
    const l = await launchWithGroups(fx.server.url, { staff: ["5511900000001"] });
    const [g1] = l.groups;
    const t0 = new Date(Date.now() - 60_000);
    await emitParticipants(l.channel, g1, "join", ["5511999990001"], t0);
    await emitParticipants(l.channel, g1, "leave", ["5511999990001"], new Date(t0.getTime() + 1000));
    await emitParticipants(l.channel, g1, "join", ["5511999990001", "5511900000001"], new Date(t0.getTime() + 2000));
    const res = await l.api("GET", MEMBERS(l.id, "?format=csv"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${l.slug}-membros.csv"`);
    // fetch's text() drops the BOM: read the bytes.
    const raw = new Uint8Array(await (await fetch(`${fx.server.url}${MEMBERS(l.id, "?format=csv")}`, { headers: { "x-api-key": l.api.key } })).arrayBuffer());
    expect([...raw.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = res.text
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n");
    expect(lines[0]).toBe("participant,id_group,group_name,joined_at,left_at,staff,buyer");
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(new RegExp(`^5511999990001,${g1},Turma 7 #1,[^,]+,[^,]+,false,false$`));
    expect(lines[2]).toMatch(/^5511999990001,.*,,false,false$/);
    expect(lines[3]).toMatch(/^5511900000001,.*,,true,false$/);
    const semi = await l.api("GET", MEMBERS(l.id, "?format=csv&delimiter=semicolon"));
    expect(semi.text.replace(/^\uFEFF/, "").split("\r\n")[0]).toBe("participant;id_group;group_name;joined_at;left_at;staff;buyer");
    expectEnvelope(await l.api("GET", MEMBERS(l.id, "?format=xml")), 400, "Bad Request");
    // The dashboard downloads the same file from its streamed route (test/launches/dashboard-downloads.test.ts).
    // JSON pages: page 2 of 3 rows is empty.
    expect((await l.api("GET", MEMBERS(l.id, "?page=2"))).json).toMatchObject({ page: 2, total: 3, members: [] });
  });

  it("CSV quoting (CONTRACT §6), both delimiters: a field holding `,` or `;`, a quote, CR or LF is quoted; `=`, `+`, `-`, `@`, TAB or CR first gets a `'`", async () => {
    const l = await launchWithGroups(fx.server.url, { groups: 1 });
    const [g1] = l.groups;
    const db = await getDb();
    await emitParticipants(l.channel, g1, "join", ["5511999990001"]);
    const csv = async (name: string, delimiter: "comma" | "semicolon") => {
      await db.update(launchGroups).set({ name }).where(eq(launchGroups.launchId, l.id));
      const text = (await l.api("GET", MEMBERS(l.id, `?format=csv&delimiter=${delimiter}`))).text.replace(/^\uFEFF/, "");
      // The group name is the third field of the only row.
      const row = text.slice(text.indexOf("\r\n") + 2, text.lastIndexOf("\r\n"));
      const sep = delimiter === "comma" ? "," : ";";
      return row.split(sep).slice(2, -4).join(sep);
    };
    const cases: [string, string][] = [
      // pt-BR Excel opens a comma file splitting on `;`: unquoted, `=1+1` would become a formula cell.
      ["Turma;=1+1", '"Turma;=1+1"'],
      ["Turma, VIP", '"Turma, VIP"'],
      ['Turma "VIP"', '"Turma ""VIP"""'],
      ["Turma\nVIP", '"Turma\nVIP"'],
      ["=HYPERLINK(1)", "'=HYPERLINK(1)"],
      ["+5511", "'+5511"],
      ["-1", "'-1"],
      ["@SUM(A1)", "'@SUM(A1)"],
      ["\tTurma", "'\tTurma"],
      ["\rTurma", `"'\rTurma"`],
      ["=1+1;2", `"'=1+1;2"`],
      ["Turma 7 #1", "Turma 7 #1"],
    ];
    for (const delimiter of ["comma", "semicolon"] as const) {
      for (const [name, field] of cases) expect([delimiter, name, await csv(name, delimiter)]).toEqual([delimiter, name, field]);
    }
  });

  it("the OpenAPI document lists the CSV beside the JSON answer", async () => {
    const doc = (await request(fx.server.url, "GET", "/api/openapi.json")).json;
    const ok = doc.paths["/api/external/launch-members/{id_launch}"].get.responses["200"];
    expect(Object.keys(ok.content)).toEqual(["application/json", "text/csv"]);
    expect(doc.paths["/api/external/launch-analytics/{id_launch}"].get).toBeDefined();
  });
});

describe("group_activity webhooks", () => {
  const webhooks = withWebhookRunner("100,200,300");

  it("members_changed: every change reported, staff marked, at most once per group per LAUNCH_MEMBERS_REPORT_SECONDS; signed", async () => {
    void webhooks;
    const l = await launchWithGroups(fx.server.url, { staff: ["5511900000001"] });
    const [g1, g2] = l.groups;
    await l.api("PATCH", "/api/external/edit-webhooks", { group_activity_url: `${fx.receiver.url}/ga-${l.api.tenantId}` });
    const secret = (await l.api("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;
    const db = await getDb();
    const t = Date.now();
    // The earlier tests' changes (this file's database) go out first, so the counts below are this test's.
    await reportMembersChanged(db, new Date(t - 3_600_000));
    await emitParticipants(l.channel, g1, "join", ["5511999990001", "5511900000001"]);
    await emitParticipants(l.channel, g2, "join", ["5511999990002"]);
    expect(await reportMembersChanged(db, new Date(t))).toBe(2);
    // Within the minute: nothing more for g1, even with news.
    await emitParticipants(l.channel, g1, "leave", ["5511999990001"]);
    await emitParticipants(l.channel, g1, "join", ["5511999990003"]);
    expect(await reportMembersChanged(db, new Date(t + 30_000))).toBe(0);
    expect(await reportMembersChanged(db, new Date(t + 61_000))).toBe(1);
    expect(await reportMembersChanged(db, new Date(t + 200_000))).toBe(0);

    const got = await waitFor("three members_changed webhooks", () => {
      const mine = fx.receiver.received.filter((r) => r.path === `/ga-${l.api.tenantId}`);
      return mine.length >= 3 && mine;
    });
    const events = got.map((r) => new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as { type: string; data: any });
    expect(events.every((e) => e.type === "group_activity")).toBe(true);
    const ofG1 = events.filter((e) => e.data.id_group === g1).map((e) => e.data);
    expect(ofG1).toEqual([
      {
        event: "members_changed",
        id_launch: l.id,
        id_group: g1,
        joined: [
          { participant: "5511999990001", staff: false },
          { participant: "5511900000001", staff: true },
        ],
        left: [],
        members: 2,
      },
      {
        event: "members_changed",
        id_launch: l.id,
        id_group: g1,
        joined: [{ participant: "5511999990003", staff: false }],
        left: [{ participant: "5511999990001", staff: false }],
        members: 2,
      },
    ]);
    expect(events.find((e) => e.data.id_group === g2)?.data).toMatchObject({ joined: [{ participant: "5511999990002", staff: false }], members: 1 });
  });
});
