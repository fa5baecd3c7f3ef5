/**
 * A launch's members from a real gateway (CONTRACT §6 "Participants from a real gateway";
 * docs/decisions.md#members): the whole service with MESSAGING_PROVIDER=evolution against the fake
 * Evolution API 2.3.7 in its default mode — Baileys 7 participant objects, Evolution's broken
 * `participantsData`, its webhook retries, join requests it never forwards.
 */
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchGroups } from "../../db/schema";
import { checkInviteLinks } from "../../server/launches/link/invite-health";
import { getServices } from "../../server/services";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import type { TestServer } from "../http-server";
import { waitFor, type Api } from "../helpers";
import { evolutionLaunch as launchWithEvolution, groupRows } from "./fixtures";

let fake: FakeEvolution;
let server: TestServer;
/** CONTRACT §6: `members` follows the platform's count once no event of the group arrived for 10 minutes. */
const membersQuietMs = 10 * 60_000;

beforeAll(async () => {
  ({ fake, server } = await startEvolutionService());
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

const evolutionLaunch = (opts: Parameters<typeof launchWithEvolution>[2] = {}) => launchWithEvolution(server.url, fake, opts);

type Row = { participant: string; id_group: string; left_at: string | null; staff: boolean };
const members = async (l: { api: Api; id: string }) => (await l.api("GET", `/api/external/launch-members/${l.id}`)).json.members as Row[];
const totals = async (l: { api: Api; id: string }) => (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals;
const csvLines = async (l: { api: Api; id: string }) =>
  (await l.api("GET", `/api/external/launch-members/${l.id}?format=csv`)).text
    .replace(/^\uFEFF/, "")
    .trimEnd()
    .split("\r\n")
    .slice(1);
/** The group-participants.update webhooks the fake posted for a group: their HTTP statuses in order. */
const participantPosts = (groupId: string) =>
  fake.webhookDeliveries.filter((d) => {
    const b = d.body as { event?: string; data?: { id?: string } };
    return b.event === "group-participants.update" && b.data?.id === groupId;
  });

describe("one person under a LID and a phone number", () => {
  it("a join by LID and a leave by phone (the leave carries the pairing) are one person: one row shown by the number, closed; unique_members 1", async () => {
    const l = await evolutionLaunch();
    const [g1, g2] = l.groups;
    const start = (await groupRows(l.id)).map((g) => g.members);
    // Baileys 7: the join names the person by LID alone; the leave by phone number, with the LID beside it.
    await fake.groupJoin(l.channel, g1, ["201000000000001@lid"]);
    expect((await members(l)).map((r) => r.participant)).toEqual(["201000000000001@lid"]);
    await fake.groupLeave(l.channel, g1, ["5511999990001"], { lids: { "5511999990001": "201000000000001@lid" } });
    // Later the same person joins the second group, by phone number.
    await fake.groupJoin(l.channel, g2, ["5511999990001"]);

    expect(await totals(l)).toMatchObject({ unique_members: 1, joins: 2, leaves: 1 });
    expect((await groupRows(l.id)).map((g) => g.members)).toEqual([start[0], start[1] + 1]);
    const rows = await members(l);
    expect(rows.map((r) => [r.participant, r.id_group, r.left_at !== null])).toEqual([
      ["5511999990001", g1, true],
      ["5511999990001", g2, false],
    ]);
    const lines = await csvLines(l);
    expect(lines).toHaveLength(2);
    expect(lines.every((line) => line.startsWith("5511999990001,") && !line.includes("@lid"))).toBe(true);
  });

  it("a LID that came alone is looked up in the group's participant list; the leave by phone closes the same row", async () => {
    const l = await evolutionLaunch({ groups: 1 });
    const [g1] = l.groups;
    const start = (await groupRows(l.id))[0].members;
    // The event carries the LID only; the group's list (GET /group/participants) has the number.
    await fake.groupJoin(l.channel, g1, ["202000000000002@lid"], { resolveLids: { "202000000000002@lid": "5511999990002" }, listOnly: true });
    expect((await members(l)).map((r) => r.participant)).toEqual(["5511999990002"]);
    await fake.groupLeave(l.channel, g1, ["5511999990002"]);
    expect((await members(l)).map((r) => [r.participant, r.left_at !== null])).toEqual([["5511999990002", true]]);
    expect(await totals(l)).toMatchObject({ unique_members: 1, joins: 1, leaves: 1 });
    expect((await groupRows(l.id))[0].members).toBe(start);
  });
});

describe("staff seen only by LID", () => {
  it("a staff number, an admin and the channel's own number that come by LID alone are staff, never leads (looked up at the join, or learned by the hourly check)", async () => {
    const staff = "5511900000001";
    const admin = "5511900000002";
    const l = await evolutionLaunch({ groups: 1, staff: [staff], admins: [admin] });
    const [g1] = l.groups;
    // The list carries the staff number: the look-up at the join finds it.
    await fake.groupJoin(l.channel, g1, ["203000000000001@lid"], { resolveLids: { "203000000000001@lid": staff }, listOnly: true });
    // Within the same minute (lidLookupGapMs) the list is not read again: the admin is recorded by LID for now...
    await fake.groupJoin(l.channel, g1, ["203000000000002@lid"], { resolveLids: { "203000000000002@lid": admin }, listOnly: true });
    // ...and so is the channel's own number, which the group lists by LID (with its number beside it), when
    // an event names it by that LID alone.
    const own = fake.instances.get(l.channel)!.owner;
    const listed = fake.group(l.channel, g1)!.participants!.find((p) => p.id === `${own}@s.whatsapp.net`)!;
    Object.assign(listed, { id: "203000000000009@lid", phoneNumber: `${own}@s.whatsapp.net` });
    await fake.groupJoin(l.channel, g1, ["203000000000009@lid"], { listOnly: true });
    expect(await totals(l)).toMatchObject({ joins: 2, unique_members: 2 });
    // The hourly check reads the list (findGroupInfos): the rows move to the numbers, staff.
    const { db, provider } = await getServices();
    await checkInviteLinks(db, provider, new Date(), { all: true });
    expect(await totals(l)).toMatchObject({ joins: 0, leaves: 0, unique_members: 0 });
    const rows = await members(l);
    expect(rows.map((r) => [r.participant, r.staff])).toEqual([
      [staff, true],
      [admin, true],
      [own, true],
    ]);
    // The group is still the number's (found in the list by the number beside its LID): not broken.
    expect((await groupRows(l.id))[0].status).not.toBe("broken");
  });
});

describe("an event that could not be recorded", () => {
  it("is answered 503, sent again by the gateway, and counts once; a resend of a recorded event changes nothing, even after a leave", async () => {
    const l = await evolutionLaunch({ groups: 1 });
    const [g1] = l.groups;
    const start = (await groupRows(l.id))[0].members;
    fake.knobs.webhookRetryDelaysMs = [300, 300, 300, 300, 300, 300, 300, 300, 300];
    const db = await getDb();
    // The database refuses the join's row (a full disk, a lost connection…): the event is not recorded.
    await db.execute(sql`create or replace function refuse_participant() returns trigger language plpgsql as $$
      begin raise exception 'no space left on device (test)'; end $$`);
    await db.execute(sql`create trigger refuse_participant before insert on launch_participants for each row execute function refuse_participant()`);
    try {
      await fake.groupJoin(l.channel, g1, ["5511999990003"]);
      expect(participantPosts(g1).map((d) => d.status)).toEqual([503]);
      expect(await members(l)).toEqual([]);
      expect((await groupRows(l.id))[0].members).toBe(start);
    } finally {
      await db.execute(sql`drop trigger if exists refuse_participant on launch_participants`);
    }
    // The gateway sends it again (Evolution retries a 5xx); now it is recorded, once.
    await fake.webhooksSettled();
    const statuses = participantPosts(g1).map((d) => d.status);
    expect(statuses[0]).toBe(503);
    expect(statuses.at(-1)).toBe(200);
    expect(await totals(l)).toMatchObject({ joins: 1, unique_members: 1 });
    expect((await groupRows(l.id))[0].members).toBe(start + 1);

    // The person leaves; then the join's body comes once more (our 200 lost on the way, say): nothing
    // changes — it is the same event, not a new entrada after the saída.
    await fake.groupLeave(l.channel, g1, ["5511999990003"]);
    const inst = fake.instances.get(l.channel)!;
    const again = await fetch(inst.webhook!.url, {
      method: "POST",
      headers: { ...inst.webhook!.headers, "content-type": "application/json" },
      body: JSON.stringify(participantPosts(g1)[0].body),
    });
    expect(again.status).toBe(200);
    expect((await members(l)).map((r) => r.left_at !== null)).toEqual([true]);
    expect(await totals(l)).toMatchObject({ joins: 1, leaves: 1 });
    expect((await groupRows(l.id))[0].members).toBe(start);
  });
});

describe("members from the platform's count", () => {
  it("a drifted group's members becomes the platform's size, but not while an event of the group is recent", async () => {
    const l = await evolutionLaunch();
    const [g1, g2] = l.groups;
    const db = await getDb();
    const { provider } = await getServices();
    // Events lost: the platform has people the service never heard of (webhooks off while they joined).
    const inst = fake.instances.get(l.channel)!;
    const hook = inst.webhook;
    inst.webhook = undefined;
    await fake.groupJoin(l.channel, g1, ["5511999990101", "5511999990102"]);
    await fake.groupJoin(l.channel, g2, ["5511999990201"]);
    inst.webhook = hook;
    await fake.groupJoin(l.channel, g1, ["5511999990103"]);
    const size = async (g: string) => (await provider.groupState(l.channel, g)).size;
    const [s1, s2] = [await size(g1), await size(g2)];
    const before = (await groupRows(l.id)).map((g) => g.members);
    expect(before[0]).toBeLessThan(s1);
    expect(before[1]).toBeLessThan(s2);

    const now = new Date();
    // (The check covers every launch of this file's database: other tests' groups may be corrected too.)
    expect((await checkInviteLinks(db, provider, now, { all: true })).corrected).toBeGreaterThanOrEqual(1);
    // g1 had an event just now: left alone; g2 had none: corrected.
    expect((await groupRows(l.id)).map((g) => g.members)).toEqual([before[0], s2]);
    expect((await db.select().from(launchGroups).where(eq(launchGroups.groupId, g1)))[0].lastEventAt).not.toBeNull();

    // Nine minutes later still too recent; past ten minutes the platform's count wins.
    await checkInviteLinks(db, provider, new Date(now.getTime() + membersQuietMs - 60_000), { all: true });
    expect((await groupRows(l.id)).map((g) => g.members)).toEqual([before[0], s2]);
    await checkInviteLinks(db, provider, new Date(now.getTime() + membersQuietMs + 1000), { all: true });
    expect((await groupRows(l.id)).map((g) => g.members)).toEqual([s1, s2]);
  });
});

describe("group approval on", () => {
  it("a pending join request is not a join; its approval is", async () => {
    const l = await evolutionLaunch({ groups: 1 });
    const [g1] = l.groups;
    fake.group(l.channel, g1)!.joinApproval = true;
    const start = (await groupRows(l.id))[0].members;
    const posts = participantPosts(g1).length;
    // Following the link makes a request: Baileys emits group.join-request, which Evolution does not forward.
    await fake.requestJoin(l.channel, g1, ["5511999990301"]);
    expect(participantPosts(g1)).toHaveLength(posts);
    // A gateway that did forward it (a fork, a later version) changes nothing either.
    const inst = fake.instances.get(l.channel)!;
    const forwarded = await fetch(inst.webhook!.url, {
      method: "POST",
      headers: { ...inst.webhook!.headers, "content-type": "application/json" },
      body: JSON.stringify({
        event: "group.join-request",
        instance: l.channel,
        data: { id: g1, author: "5511999990301@s.whatsapp.net", participant: "5511999990301@s.whatsapp.net", action: "created", method: "invite_link" },
      }),
    });
    expect(forwarded.status).toBe(200);
    expect(await members(l)).toEqual([]);
    expect(await totals(l)).toMatchObject({ joins: 0, unique_members: 0 });
    // The platform's count leaves pending requests out too: no correction counts them.
    const { db, provider } = await getServices();
    await checkInviteLinks(db, provider, new Date(Date.now() + membersQuietMs + 1000), { all: true });
    const corrected = (await groupRows(l.id))[0].members;
    expect(corrected).toBe((await provider.groupState(l.channel, g1)).size);

    await fake.approveJoin(l.channel, g1, ["5511999990301"]);
    await waitFor("the approved join", async () => (await totals(l)).joins === 1);
    expect((await members(l)).map((r) => r.participant)).toEqual(["5511999990301"]);
    expect((await groupRows(l.id))[0].members).toBe(corrected + 1);
    expect(start).toBeLessThanOrEqual(corrected);
  });
});
