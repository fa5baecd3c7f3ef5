import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEnvelope, newTenant, request, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url);
});
afterAll(() => server.close());

describe("create-channel", () => {
  it("creates a channel that pairs and answers 201 with the spec's fields", async () => {
    const res = await api("POST", "/api/external/create-channel", { name: "Vendas 1" });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, name: "Vendas 1", status: "connected" });
    expect(res.json.id_channel).toMatch(/^channel_[0-9a-f-]{36}$/);
    expect(typeof res.json.channel_ref).toBe("string");
    expect(new Date(res.json.timestamp).toISOString()).toBe(res.json.timestamp);
  });

  it("accepts the api-key alias header", async () => {
    const res = await request(server.url, "POST", "/api/external/create-channel", { name: "Alias" }, { "api-key": api.key });
    expect(res.status).toBe(201);
  });

  it("rejects a missing name naming the field", async () => {
    const res = await api("POST", "/api/external/create-channel", {});
    const body = expectEnvelope(res, 400, "Bad Request");
    expect(body.message).toContain("name");
  });

  it("rejects malformed JSON in the envelope", async () => {
    const res = await api("POST", "/api/external/create-channel", "{name:", { "content-type": "application/json" });
    expect(expectEnvelope(res, 400, "Bad Request").code).toBe("malformed_json");
  });

  it("answers 401 without a key and with a wrong key", async () => {
    expectEnvelope(await request(server.url, "POST", "/api/external/create-channel", { name: "x" }), 401, "Unauthorized");
    const wrong = await request(server.url, "POST", "/api/external/create-channel", { name: "x" }, { "x-api-key": `sk_live_${"a".repeat(40)}` });
    expect(expectEnvelope(wrong, 401, "Unauthorized").message).toMatch(/invalid or absent/);
  });

  it("answers 403 with current and max at the channel limit", async () => {
    const t = await newTenant(server.url);
    for (let i = 0; i < 10; i++) expect((await t("POST", "/api/external/create-channel", { name: `C${i}` })).status).toBe(201);
    const body = expectEnvelope(await t("POST", "/api/external/create-channel", { name: "one too many" }), 403, "Forbidden");
    expect(body).toMatchObject({ current: 10, max: 10 });
  });
});

describe("edit-channel", () => {
  it("renames and answers the spec's fields", async () => {
    const { json } = await api("POST", "/api/external/create-channel", { name: "Old" });
    const res = await api("PUT", `/api/external/edit-channel/${json.id_channel}`, { name: "New" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, id_channel: json.id_channel, name: "New", status: "connected" });
    expect(typeof res.json.message).toBe("string");
    expect(res.json.timestamp).toBeTruthy();
  });

  it("404 for an unknown channel and for another tenant's channel", async () => {
    expectEnvelope(await api("PUT", `/api/external/edit-channel/channel_00000000-0000-4000-8000-000000000000`, { name: "x" }), 404, "Not Found");
    const other = await newTenant(server.url);
    const { json } = await other("POST", "/api/external/create-channel", { name: "Theirs" });
    expectEnvelope(await api("PUT", `/api/external/edit-channel/${json.id_channel}`, { name: "Mine" }), 404, "Not Found");
  });

  it("400 for a malformed id or missing name", async () => {
    expect(expectEnvelope(await api("PUT", `/api/external/edit-channel/nope`, { name: "x" }), 400, "Bad Request").message).toContain("id_channel");
    const { json } = await api("POST", "/api/external/create-channel", { name: "Old" });
    expect(expectEnvelope(await api("PUT", `/api/external/edit-channel/${json.id_channel}`, {}), 400, "Bad Request").message).toContain("name");
  });
});

describe("list-groups", () => {
  it("lists the simulator's stable groups", async () => {
    const { json } = await api("POST", "/api/external/create-channel", { name: "G" });
    const res = await api("GET", `/api/external/list-groups/${json.id_channel}`);
    expect(res.status).toBe(200);
    expect(res.json.total_groups).toBe(20);
    expect(res.json.groups[0]).toEqual({ id_group: expect.stringMatching(/^\d+@g\.us$/), name: "Grupo 01" });
    const again = await api("GET", `/api/external/list-groups/${json.id_channel}`);
    expect(again.json.groups).toEqual(res.json.groups);
  });

  it("503 when the channel is offline, 404 when unknown", async () => {
    const { json } = await api("POST", "/api/external/create-channel", { name: "Off" });
    expect((await api("POST", `/api/simulator/channels/${json.id_channel}/state`, { connected: false })).status).toBe(200);
    expectEnvelope(await api("GET", `/api/external/list-groups/${json.id_channel}`), 503, "Service Unavailable");
    expectEnvelope(await api("GET", `/api/external/list-groups/channel_00000000-0000-4000-8000-000000000000`), 404, "Not Found");
  });
});

describe("the facade", () => {
  it("answers unknown paths and wrong methods in the envelope", async () => {
    expectEnvelope(await api("GET", "/api/external/nothing-here"), 404, "Not Found");
    const wrong = await api("GET", "/api/external/create-channel");
    expectEnvelope(wrong, 405, "Method Not Allowed");
    expect(wrong.headers.get("allow")).toBe("POST");
  });
});
