import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEnvelope, newTenant, request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// This file's process has its own limiter settings (read when the limiters are first built).
process.env.RATE_LIMIT_API_KEY_PER_MINUTE = "4";
process.env.RATE_LIMIT_FAILED_AUTH_PER_MINUTE = "3";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("the simulator's control endpoints are rate limited like the REST facade", () => {
  it("share the API key's per-minute limit with /api/external/*, then 429 with Retry-After", async () => {
    const t = await newTenant(server.url);
    const { json: ch } = await t("POST", "/api/external/create-channel", { name: "C" });
    expect((await t("GET", `/api/external/list-groups/${ch.id_channel}`)).status).toBe(200);
    const first = await t("POST", "/api/simulator/latency", { ms: 0 });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("4");
    expect(first.headers.get("ratelimit-remaining")).toBe("1");
    expect((await t("GET", "/api/simulator/messages")).status).toBe(200);
    const limited = await t("POST", "/api/simulator/latency", { ms: 0 });
    expect(expectEnvelope(limited, 429, "Too Many Requests").code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // The REST facade sees the same spent key.
    expectEnvelope(await t("POST", "/api/external/create-channel", { name: "D" }), 429, "Too Many Requests");
    // Another key is not affected.
    expect((await (await newTenant(server.url))("GET", "/api/simulator/messages")).status).toBe(200);
  });

  it("a missing or invalid key counts as a failed authentication of the address; a blocked address gets 429", async () => {
    const ip = { "x-forwarded-for": `203.0.113.${1 + Math.floor(Math.random() * 250)}` };
    expectEnvelope(await request(server.url, "POST", "/api/simulator/latency", { ms: 1 }, ip), 401, "Unauthorized");
    expectEnvelope(await request(server.url, "GET", "/api/simulator/messages", undefined, { ...ip, "x-api-key": "sk_live_wrong" }), 401, "Unauthorized");
    expectEnvelope(await request(server.url, "POST", "/api/simulator/groups/1%40g.us/failures", { always: true }, ip), 401, "Unauthorized");
    const blocked = await request(server.url, "POST", "/api/simulator/latency", { ms: 1 }, ip);
    expect(expectEnvelope(blocked, 429, "Too Many Requests").code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The REST facade sees the same blocked address.
    expectEnvelope(
      await request(server.url, "GET", "/api/external/list-groups/channel_00000000-0000-4000-8000-000000000000", undefined, ip),
      429,
      "Too Many Requests",
    );
  });
});
