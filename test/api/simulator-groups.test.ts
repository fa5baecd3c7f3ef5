import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderEvent } from "../../server/messaging/provider";
import { SIMULATOR_GROUP_LIMIT, type SimulatorProvider } from "../../server/messaging/simulator";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// docs/decisions.md#launches-on-the-simulator: groups made through the provider, invite links, and the
// control endpoints that make people join and leave (each emitting the participant event a gateway would).
let server: TestServer;
let provider: SimulatorProvider;
const events: ProviderEvent[] = [];

beforeAll(async () => {
  server = await startTestServer();
  provider = (await getServices()).provider as SimulatorProvider;
  provider.subscribe((e) => void events.push(e));
});
afterAll(() => server.close());

const template = { name: "Turma 7 #1", description: "Grupo do lançamento", adminsOnly: true, admins: ["5511988887777"] };
/** A simulated number: a mobile of one of the simulator's DDDs (all ≥ 31) as the platform writes it, without the 9. */
const ownOrPerson = /^55(31|41|48|51|61|71|81|85|91)8\d{7}$/;
const codeOf = (url: string) => url.slice("https://chat.whatsapp.com/".length);
const participantEvents = (groupId: string) => events.flatMap((e) => (e.type === "group_participants" && e.groupId === groupId ? [e] : []));

async function channelOf(t: Api) {
  const { json } = await t("POST", "/api/external/create-channel", { name: "Canal" });
  return json.id_channel as string;
}

const participants = (t: Api, group: string, body: unknown) => t("POST", `/api/simulator/groups/${encodeURIComponent(group)}/participants`, body);
const join = (t: Api, code: string, participant: string) => t("POST", `/api/simulator/invites/${code}/join`, { participant });

describe("groups made through the simulator", () => {
  it("appear in list-groups after the derived groups; the channel's number is their admin; ownNumber is a DDD ≥ 31 mobile without its ninth digit", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const before = (await t("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[];
    const made = await provider.createGroup(channel, template);
    const after = (await t("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string; name: string }[];
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.at(-1)).toMatchObject({ id_group: made.id_group, name: "Turma 7 #1" });
    const own = await provider.ownNumber(channel);
    // As Evolution's formatBRNumber writes it: 55 + DDD ≥ 31 + 8 digits (the 9 dropped).
    expect(own).toMatch(ownOrPerson);
    expect(await provider.ownNumber(channel)).toBe(own);
    const listed = (await t("GET", `/api/simulator/groups/${encodeURIComponent(made.id_group)}/participants`)).json;
    expect(listed).toMatchObject({ success: true, id_group: made.id_group, own_number: own, members: 2 });
    expect(listed.participants.map((p: { participant: string; admin: boolean }) => [p.participant, p.admin]).sort()).toEqual(
      [
        [own, true],
        ["5511988887777", true],
      ].sort(),
    );
  });
});

describe("POST /api/simulator/invites/{code}/join", () => {
  it("joins the group that owns the code and emits a join event before answering; a repeat is not a second join", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const g = await provider.createGroup(channel, { ...template, admins: [] });
    const url = await provider.inviteUrl(channel, g.id_group);
    expect(url).toMatch(/^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9]{22}$/);
    // Codes are public: another tenant's key joins through it.
    const stranger = await newTenant(server.url);
    const res = await join(stranger, codeOf(url), "5511912345678");
    expect(res.json).toEqual({ success: true, id_group: g.id_group, participant: "5511912345678", joined: true, members: 2 });
    expect(participantEvents(g.id_group)).toEqual([
      { type: "group_participants", channelId: channel, groupId: g.id_group, action: "join", participants: ["5511912345678"], at: expect.any(Date) },
    ]);
    expect((await join(t, codeOf(url), "5511912345678")).json).toMatchObject({ joined: false, members: 2 });
    expect(participantEvents(g.id_group)).toHaveLength(1);
    // An opaque platform id (LID) joins as it is.
    expect((await join(t, codeOf(url), "123456789012345@lid")).json).toMatchObject({ joined: true, members: 3 });
  });

  it("a DDD ≥ 31 mobile given with its ninth digit is in the group, and in its events, as the platform writes it: without the 9", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const g = await provider.createGroup(channel, { ...template, admins: ["5531988887777"] });
    const url = await provider.inviteUrl(channel, g.id_group);
    expect((await join(t, codeOf(url), "5531987650001")).json).toMatchObject({ joined: true, members: 3 });
    // The same person without the 9 is already in; a São Paulo mobile and one starting 6 keep their 9.
    expect((await join(t, codeOf(url), "553187650001")).json).toMatchObject({ joined: false, members: 3 });
    await participants(t, g.id_group, { join: ["5511987650002", "5531967650003"] });
    expect(participantEvents(g.id_group).map((e) => e.participants)).toEqual([["553187650001"], ["5511987650002", "5531967650003"]]);
    const listed = (await t("GET", `/api/simulator/groups/${encodeURIComponent(g.id_group)}/participants`)).json.participants as { participant: string }[];
    expect(listed.map((p) => p.participant).sort()).toEqual(
      [await provider.ownNumber(channel), "553188887777", "553187650001", "5511987650002", "5531967650003"].sort(),
    );
    // A leave given with the 9 finds them.
    expect((await participants(t, g.id_group, { leave: ["5531987650001"] })).json).toMatchObject({ left: ["553187650001"] });
  });

  it("404 for an unknown code, a revoked code and a group gone; 400 for a participant that is not a number or LID", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const g = await provider.createGroup(channel, { ...template, admins: [] });
    expectEnvelope(await join(t, "AbCdEfGhIjKlMnOpQrStUv", "5511912345678"), 404, "Not Found");
    const first = await provider.inviteUrl(channel, g.id_group);
    expectEnvelope(await join(t, codeOf(first), "5511 9123"), 400, "Bad Request");
    // A group admin revokes the link on the phone: the old code is dead, a new one works.
    const revoked = await t("POST", `/api/simulator/groups/${encodeURIComponent(g.id_group)}/invite/revoke`, {});
    expect(revoked.json).toEqual({
      success: true,
      id_group: g.id_group,
      revoked: [first],
      invite_url: expect.stringMatching(/^https:\/\/chat\.whatsapp\.com\//),
    });
    expect(await provider.inviteUrl(channel, g.id_group)).toBe(revoked.json.invite_url);
    expectEnvelope(await join(t, codeOf(first), "5511912345678"), 404, "Not Found");
    expect((await join(t, codeOf(revoked.json.invite_url), "5511912345678")).status).toBe(200);
    // renewInviteUrl (the service's own renewal) also kills the previous code.
    const renewed = await provider.renewInviteUrl(channel, g.id_group);
    expectEnvelope(await join(t, codeOf(revoked.json.invite_url), "5511900000001"), 404, "Not Found");
    expect((await join(t, codeOf(renewed), "5511900000001")).status).toBe(200);
    // The group vanishes: its link stops working.
    await t("POST", `/api/simulator/groups/${encodeURIComponent(g.id_group)}/state`, { exists: false });
    expectEnvelope(await join(t, codeOf(renewed), "5511900000002"), 404, "Not Found");
  });

  it(`409 when the group is at ${SIMULATOR_GROUP_LIMIT}`, async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const g = await provider.createGroup(channel, { ...template, admins: [] });
    const filled = await participants(t, g.id_group, { join: SIMULATOR_GROUP_LIMIT - 2 });
    expect(filled.json.members).toBe(SIMULATOR_GROUP_LIMIT - 1);
    expect(new Set(filled.json.joined).size).toBe(SIMULATOR_GROUP_LIMIT - 2);
    const code = codeOf(await provider.inviteUrl(channel, g.id_group));
    expect((await join(t, code, "5511900000003")).json.members).toBe(SIMULATOR_GROUP_LIMIT);
    expectEnvelope(await join(t, code, "5511900000004"), 409, "Conflict");
    expectEnvelope(await participants(t, g.id_group, { join: 1 }), 409, "Conflict");
    expect((await provider.groupState(channel, g.id_group)).size).toBe(SIMULATOR_GROUP_LIMIT);
  });
});

describe("POST /api/simulator/groups/{id_group}/participants", () => {
  it("join N / join [..] / leave N (most recent non-admins) / leave [..]; each emits one event; never the own number", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const g = await provider.createGroup(channel, template);
    const own = (await provider.ownNumber(channel)) as string;
    const three = await participants(t, g.id_group, { join: 3 });
    expect(three.json).toMatchObject({ success: true, id_group: g.id_group, left: [], members: 5 });
    expect(three.json.joined).toHaveLength(3);
    for (const p of three.json.joined) expect(p).toMatch(ownOrPerson);
    const named = await participants(t, g.id_group, { join: ["5511911110000", "5511922220000"] });
    expect(named.json).toMatchObject({ joined: ["5511911110000", "5511922220000"], members: 7 });
    // The two most recent non-admin participants: the named ones (admins and the own number never).
    const two = await participants(t, g.id_group, { leave: 2 });
    expect([...two.json.left].sort()).toEqual(["5511911110000", "5511922220000"]);
    expect(two.json.members).toBe(5);
    const all = await participants(t, g.id_group, { leave: 100 });
    expect([...all.json.left].sort()).toEqual([...three.json.joined].sort());
    expect(all.json.members).toBe(2);
    expect((await participants(t, g.id_group, { leave: ["5511988887777", "5511900009999"] })).json).toMatchObject({ left: ["5511988887777"], members: 1 });
    expectEnvelope(await participants(t, g.id_group, { leave: [own] }), 400, "Bad Request");
    expectEnvelope(await participants(t, g.id_group, { join: 0 }), 400, "Bad Request");
    expectEnvelope(await participants(t, g.id_group, { join: 1, leave: 1 }), 400, "Bad Request");
    expect(participantEvents(g.id_group).map((e) => [e.action, e.participants.length])).toEqual([
      ["join", 3],
      ["join", 2],
      ["leave", 2],
      ["leave", 3],
      ["leave", 1],
    ]);
    expect(await provider.groupState(channel, g.id_group)).toEqual({ exists: true, admin: true, size: 1 });
  });

  it("works on a channel's derived groups (adopted groups); another tenant's or an unknown group is 404", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const [first] = (await t("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[];
    expect((await participants(t, first.id_group, { join: ["5511933330000"] })).json).toMatchObject({ joined: ["5511933330000"], members: 2 });
    expect(await provider.groupState(channel, first.id_group)).toEqual({ exists: true, admin: true, size: 2 });
    expect(await provider.inviteUrl(channel, first.id_group)).toMatch(/^https:\/\/chat\.whatsapp\.com\//);
    const other = await newTenant(server.url);
    expectEnvelope(await participants(other, first.id_group, { join: 1 }), 404, "Not Found");
    expectEnvelope(await other("POST", `/api/simulator/groups/${encodeURIComponent(first.id_group)}/state`, { admin: false }), 404, "Not Found");
    expectEnvelope(await participants(t, "120363999999999999999@g.us", { join: 1 }), 404, "Not Found");
  });
});

describe("POST /api/simulator/groups/{id_group}/state", () => {
  it("admin: false → the number cannot read the link; exists: false → gone from list-groups; both can be undone", async () => {
    const t = await newTenant(server.url);
    const channel = await channelOf(t);
    const g = await provider.createGroup(channel, { ...template, admins: [] });
    const state = (body: unknown) => t("POST", `/api/simulator/groups/${encodeURIComponent(g.id_group)}/state`, body);
    expect((await state({ admin: false })).json).toEqual({ success: true, id_group: g.id_group, exists: true, admin: false, members: 1 });
    expect(await provider.groupState(channel, g.id_group)).toEqual({ exists: true, admin: false, size: 1 });
    await expect(provider.inviteUrl(channel, g.id_group)).rejects.toThrow(/not an admin/);
    expect((await state({ admin: true })).json).toMatchObject({ admin: true });
    expect(await provider.inviteUrl(channel, g.id_group)).toMatch(/^https:\/\/chat\.whatsapp\.com\//);
    expect((await state({ exists: false })).json).toEqual({ success: true, id_group: g.id_group, exists: false, admin: false, members: 0 });
    expect(await provider.groupState(channel, g.id_group)).toEqual({ exists: false, admin: false, size: 0 });
    const listed = (await t("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[];
    expect(listed.some((x) => x.id_group === g.id_group)).toBe(false);
    expectEnvelope(await participants(t, g.id_group, { join: 1 }), 404, "Not Found");
    expectEnvelope(await state({}), 400, "Bad Request");
    expect((await state({ exists: true })).json).toMatchObject({ exists: true, admin: true, members: 1 });
  });
});
