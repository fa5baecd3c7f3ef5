import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEnvelope, newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url, { channelLimit: 100 });
});
afterAll(() => server.close());

async function channelWithGroups(t: Api = api) {
  const { json } = await t("POST", "/api/external/create-channel", { name: "Canal" });
  const groups = (await t("GET", `/api/external/list-groups/${json.id_channel}`)).json.groups as { id_group: string; name: string }[];
  return { id: json.id_channel as string, groups: groups.map((g) => g.id_group) };
}

const unknownChannel = "channel_00000000-0000-4000-8000-000000000000";
const unknownSegment = "segment_00000000-0000-4000-8000-000000000000";

describe("create-segment", () => {
  it("creates a segment over two channels and answers 201", async () => {
    const a = await channelWithGroups();
    const b = await channelWithGroups();
    const res = await api("POST", "/api/external/create-segment", {
      name: "Lançamento",
      id_channel: [a.id, b.id],
      groups: [...a.groups.slice(0, 3), ...b.groups.slice(0, 2)],
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, name: "Lançamento", total_groups: 5 });
    expect(res.json.id_segment).toMatch(/^segment_[0-9a-f-]{36}$/);
    expect(res.json.timestamp).toBeTruthy();
  });

  it("400 when a group is not in the given channels, naming it", async () => {
    const a = await channelWithGroups();
    const b = await channelWithGroups();
    const res = await api("POST", "/api/external/create-segment", { name: "X", id_channel: [a.id], groups: [a.groups[0], b.groups[0]] });
    const body = expectEnvelope(res, 400, "Bad Request");
    expect(body.message).toContain(b.groups[0]);
    expect(body.message).toContain("groups");
  });

  it("400 for missing or malformed fields, naming each", async () => {
    const a = await channelWithGroups();
    expect(
      expectEnvelope(await api("POST", "/api/external/create-segment", { id_channel: [a.id], groups: [a.groups[0]] }), 400, "Bad Request").message,
    ).toContain("name");
    expect(
      expectEnvelope(await api("POST", "/api/external/create-segment", { name: "X", id_channel: [], groups: [a.groups[0]] }), 400, "Bad Request").message,
    ).toContain("id_channel");
    expect(
      expectEnvelope(await api("POST", "/api/external/create-segment", { name: "X", id_channel: [a.id], groups: ["abc"] }), 400, "Bad Request").message,
    ).toContain("groups.0");
  });

  it("404 for an unknown channel or another tenant's channel", async () => {
    const a = await channelWithGroups();
    expectEnvelope(
      await api("POST", "/api/external/create-segment", { name: "X", id_channel: [a.id, unknownChannel], groups: [a.groups[0]] }),
      404,
      "Not Found",
    );
    const other = await newTenant(server.url);
    const theirs = await channelWithGroups(other);
    expectEnvelope(await api("POST", "/api/external/create-segment", { name: "X", id_channel: [theirs.id], groups: [theirs.groups[0]] }), 404, "Not Found");
  });

  it("503 when a channel's groups cannot be queried", async () => {
    const a = await channelWithGroups();
    await api("POST", `/api/simulator/channels/${a.id}/state`, { connected: false });
    expectEnvelope(await api("POST", "/api/external/create-segment", { name: "X", id_channel: [a.id], groups: [a.groups[0]] }), 503, "Service Unavailable");
  });
});

describe("edit-segment", () => {
  async function segment() {
    const a = await channelWithGroups();
    const { json } = await api("POST", "/api/external/create-segment", { name: "Base", id_channel: [a.id], groups: a.groups.slice(0, 4) });
    return { channel: a, id: json.id_segment as string };
  }

  it("renames only", async () => {
    const s = await segment();
    const res = await api("PUT", `/api/external/edit-segment/${s.id}`, { name: "Novo nome" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, id_segment: s.id, name: "Novo nome", total_groups: 4 });
    expect(typeof res.json.message).toBe("string");
  });

  it("replaces the groups", async () => {
    const s = await segment();
    const res = await api("PUT", `/api/external/edit-segment/${s.id}`, { groups: s.channel.groups.slice(10, 12) });
    expect(res.json).toMatchObject({ name: "Base", total_groups: 2 });
  });

  it("replaces the channels, checking the kept groups against them", async () => {
    const s = await segment();
    const b = await channelWithGroups();
    expectEnvelope(await api("PUT", `/api/external/edit-segment/${s.id}`, { id_channel: [b.id] }), 400, "Bad Request");
    const ok = await api("PUT", `/api/external/edit-segment/${s.id}`, { id_channel: [b.id], groups: b.groups.slice(0, 1) });
    expect(ok.json.total_groups).toBe(1);
  });

  it("400 on an empty body or only unknown properties", async () => {
    const s = await segment();
    expectEnvelope(await api("PUT", `/api/external/edit-segment/${s.id}`, {}), 400, "Bad Request");
    expectEnvelope(await api("PUT", `/api/external/edit-segment/${s.id}`, { colour: "blue" }), 400, "Bad Request");
  });

  it("404 for an unknown or foreign segment, 404 for an unknown channel, 503 offline", async () => {
    const s = await segment();
    expectEnvelope(await api("PUT", `/api/external/edit-segment/${unknownSegment}`, { name: "x" }), 404, "Not Found");
    const other = await newTenant(server.url);
    expectEnvelope(await other("PUT", `/api/external/edit-segment/${s.id}`, { name: "x" }), 404, "Not Found");
    expectEnvelope(await api("PUT", `/api/external/edit-segment/${s.id}`, { id_channel: [unknownChannel] }), 404, "Not Found");
    await api("POST", `/api/simulator/channels/${s.channel.id}/state`, { connected: false });
    expectEnvelope(await api("PUT", `/api/external/edit-segment/${s.id}`, { groups: s.channel.groups.slice(0, 1) }), 503, "Service Unavailable");
  });

  it("refuses to pull the monitoring group into the segment", async () => {
    const s = await segment();
    const monitor = s.channel.groups[15];
    expect((await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: monitor })).status).toBe(201);
    const res = await api("PUT", `/api/external/edit-segment/${s.id}`, { groups: [s.channel.groups[0], monitor] });
    expect(expectEnvelope(res, 400, "Bad Request").message).toContain(monitor);
  });
});

describe("monitoring group", () => {
  async function segment() {
    const a = await channelWithGroups();
    const { json } = await api("POST", "/api/external/create-segment", { name: "Base", id_channel: [a.id], groups: a.groups.slice(0, 4) });
    return { channel: a, id: json.id_segment as string };
  }

  it("configures one (201) with the looked-up names, then 409 on a second", async () => {
    const s = await segment();
    const res = await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: s.channel.groups[19] });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      success: true,
      id_segment: s.id,
      monitoring_group: { id_group: s.channel.groups[19], name: "Grupo 20", id_channel: s.channel.id, channel_name: "Canal" },
    });
    expect(res.json.timestamp).toBeTruthy();
    const again = await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: s.channel.groups[18] });
    expectEnvelope(again, 409, "Conflict");
  });

  it("400 when the group is inside the segment or not in the channel; 404 unknown segment/channel; 503 offline", async () => {
    const s = await segment();
    const inside = await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: s.channel.groups[0] });
    expect(expectEnvelope(inside, 400, "Bad Request").message).toContain("id_group");
    expectEnvelope(
      await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: "999999999@g.us" }),
      400,
      "Bad Request",
    );
    expectEnvelope(
      await api("POST", "/api/external/monitoring/group", { id_segment: unknownSegment, id_channel: s.channel.id, id_group: s.channel.groups[9] }),
      404,
      "Not Found",
    );
    expectEnvelope(
      await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: unknownChannel, id_group: s.channel.groups[9] }),
      404,
      "Not Found",
    );
    expectEnvelope(await api("POST", "/api/external/monitoring/group", { id_segment: s.id }), 400, "Bad Request");
    await api("POST", `/api/simulator/channels/${s.channel.id}/state`, { connected: false });
    expectEnvelope(
      await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: s.channel.groups[9] }),
      503,
      "Service Unavailable",
    );
  });

  it("edit needs id_channel and id_group together and changes the group", async () => {
    const s = await segment();
    const b = await channelWithGroups();
    expectEnvelope(await api("PUT", `/api/external/edit-monitoring/group/${s.id}`, { id_channel: b.id, id_group: b.groups[0] }), 404, "Not Found");
    await api("POST", "/api/external/monitoring/group", { id_segment: s.id, id_channel: s.channel.id, id_group: s.channel.groups[19] });
    expect(expectEnvelope(await api("PUT", `/api/external/edit-monitoring/group/${s.id}`, { id_channel: b.id }), 400, "Bad Request").message).toContain(
      "id_group",
    );
    expect(expectEnvelope(await api("PUT", `/api/external/edit-monitoring/group/${s.id}`, { id_group: b.groups[0] }), 400, "Bad Request").message).toContain(
      "id_channel",
    );
    expectEnvelope(await api("PUT", `/api/external/edit-monitoring/group/${s.id}`, {}), 400, "Bad Request");
    const res = await api("PUT", `/api/external/edit-monitoring/group/${s.id}`, { id_channel: b.id, id_group: b.groups[1] });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, id_segment: s.id, monitoring_group: { id_group: b.groups[1], name: "Grupo 02", id_channel: b.id } });
    const other = await newTenant(server.url);
    expectEnvelope(await other("PUT", `/api/external/edit-monitoring/group/${s.id}`, { id_channel: b.id, id_group: b.groups[2] }), 404, "Not Found");
    await api("POST", `/api/simulator/channels/${b.id}/state`, { connected: false });
    expectEnvelope(await api("PUT", `/api/external/edit-monitoring/group/${s.id}`, { id_channel: b.id, id_group: b.groups[3] }), 503, "Service Unavailable");
  });
});
