/**
 * What a stranger or an attacker sends at the edge (docs/decisions.md#limits-abuse-retention): body caps, the client address,
 * security headers. Through real sockets (test/http-server.ts); the production server's memory under
 * a 64 MiB body is measured in e2e/edge.spec.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveClientAddress } from "../../server/http/client-address";
import { expectEnvelope, newTenant, request, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { sendLarge, type RawAnswer } from "../large-body";

const MiB = 1024 * 1024;
const unknownChannel = "/api/external/list-groups/channel_00000000-0000-4000-8000-000000000000";

let server: TestServer;
let api: Api;
beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url);
});
afterAll(() => server.close());
afterEach(() => {
  delete process.env.TRUST_PROXY;
});

const envelopeOf = (a: RawAnswer) => JSON.parse(a.body) as Record<string, unknown>;

describe("request bodies", () => {
  it("a 5 MiB JSON body with a valid key is 413 in the envelope, from Content-Length, before it is read", async () => {
    const a = await sendLarge(server.url, { path: "/api/external/create-channel", total: 5 * MiB, headers: { "x-api-key": api.key } });
    expect(a.status).toBe(413);
    expect(envelopeOf(a)).toMatchObject({ success: false, error: "Payload Too Large", code: "payload_too_large" });
    expect(String(envelopeOf(a).message)).toMatch(/1 MiB/);
    expect(a.headers.connection).toBe("close");
    expect(a.sentWhenAnswered).toBeLessThan(5 * MiB);
  });

  it("the same through fetch (a body sent whole): 413 envelope; create-segment allows 4 MiB", async () => {
    const big = JSON.stringify({ name: "x".repeat(5 * MiB) });
    const res = await api("POST", "/api/external/create-channel", big);
    expect(expectEnvelope(res, 413, "Payload Too Large").code).toBe("payload_too_large");
    // 2 MiB is past the general cap but within create-segment's: validated, not refused for its size.
    const segment = await api("POST", "/api/external/create-segment", JSON.stringify({ name: "s", groups: [], pad: " ".repeat(2 * MiB) }));
    expect(segment.status).not.toBe(413);
    expect(
      expectEnvelope(await api("POST", "/api/external/create-segment", JSON.stringify({ name: "y".repeat(5 * MiB) })), 413, "Payload Too Large").code,
    ).toBe("payload_too_large");
  });

  it("a chunked body without Content-Length is cut off with 413 once it passes the cap", async () => {
    const a = await sendLarge(server.url, { path: "/api/external/create-channel", total: 64 * MiB, contentLength: false, headers: { "x-api-key": api.key } });
    expect(a.status).toBe(413);
    expect(envelopeOf(a)).toMatchObject({ success: false, error: "Payload Too Large", code: "payload_too_large" });
    // Cut off near the cap: far less than the 64 MiB offered (socket buffers hold a few MiB at most).
    expect(a.sentWhenAnswered).toBeLessThan(16 * MiB);
  });

  it("the OAuth endpoints take 64 KiB, the simulator's control endpoints 1 MiB", async () => {
    const form = await request(server.url, "POST", "/api/oauth/token", `grant_type=refresh_token&pad=${"a".repeat(100 * 1024)}`, {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(413);
    expect(form.json).toMatchObject({ success: false, error: "Payload Too Large", code: "payload_too_large" });
    const chunked = await sendLarge(server.url, {
      path: "/api/oauth/token",
      total: 4 * MiB,
      contentLength: false,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(chunked.status).toBe(413);
    const sim = await sendLarge(server.url, { path: "/api/simulator/latency", total: 2 * MiB, contentLength: false, headers: { "x-api-key": api.key } });
    expect(sim.status).toBe(413);
  });

  it("a 64 MiB body without credentials is answered 401 within 3 s, its body unread (413 when its length is declared)", async () => {
    // Streamed: nothing tells its size, so the facade authenticates first and never reads it.
    const a = await sendLarge(server.url, { path: "/api/external/create-channel", total: 64 * MiB, contentLength: false });
    expect(a.status).toBe(401);
    expect(a.ms).toBeLessThan(3000);
    expect(a.headers.connection).toBe("close");
    expect(a.sentWhenAnswered).toBeLessThan(16 * MiB);
    // Declared: refused from Content-Length, before anything else.
    const declared = await sendLarge(server.url, { path: "/api/external/create-channel", total: 64 * MiB });
    expect(declared.status).toBe(413);
    expect(declared.ms).toBeLessThan(3000);
  });
});

describe("client address", () => {
  it("is the TCP peer: rotating X-Forwarded-For does not escape the failed-auth limit (20 a minute)", async () => {
    const own = await startTestServer({ peerAddress: `198.19.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}` });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        const res = await request(own.url, "GET", unknownChannel, undefined, { "x-api-key": `sk_live_wrong${i}`, "x-forwarded-for": `203.0.113.${i + 1}` });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
      // Nor does a forged copy of the internal header.
      const forged = await request(own.url, "GET", unknownChannel, undefined, { "x-gcs-client-address": "203.0.113.250" });
      expect(forged.status).toBe(429);
    } finally {
      await own.close();
    }
  });

  it("with TRUST_PROXY=1 is the right-most X-Forwarded-For entry: its own bucket, whatever is spoofed on the left", async () => {
    process.env.TRUST_PROXY = "1";
    const a = `203.0.113.${1 + Math.floor(Math.random() * 120)}`;
    const b = `198.51.100.${1 + Math.floor(Math.random() * 120)}`;
    for (let i = 0; i < 20; i++) {
      const res = await request(server.url, "GET", unknownChannel, undefined, { "x-api-key": "sk_live_wrong", "x-forwarded-for": `10.0.0.${i}, ${a}` });
      expect(res.status).toBe(401);
    }
    // The left part is the client's to write: the same bucket.
    const spoofed = await request(server.url, "GET", unknownChannel, undefined, { "x-forwarded-for": `192.0.2.77, ${a}` });
    expect(expectEnvelope(spoofed, 429, "Too Many Requests").code).toBe("rate_limited");
    // Another right-most address: another bucket.
    const other = await request(server.url, "GET", unknownChannel, undefined, { "x-forwarded-for": `192.0.2.77, ${b}` });
    expectEnvelope(other, 401, "Unauthorized");
  });

  it("resolveClientAddress: N-th from the right, the left-most when fewer, the peer without TRUST_PROXY", () => {
    expect(resolveClientAddress("::ffff:10.1.1.1", "1.1.1.1, 2.2.2.2", 0)).toBe("10.1.1.1");
    expect(resolveClientAddress("10.1.1.1", "1.1.1.1, 2.2.2.2", 1)).toBe("2.2.2.2");
    expect(resolveClientAddress("10.1.1.1", "1.1.1.1, 2.2.2.2", 2)).toBe("1.1.1.1");
    expect(resolveClientAddress("10.1.1.1", "2.2.2.2", 3)).toBe("2.2.2.2");
    expect(resolveClientAddress("10.1.1.1", undefined, 1)).toBe("10.1.1.1");
  });
});

describe("security headers", () => {
  it("every API answer says nosniff and strict-origin-when-cross-origin", async () => {
    for (const res of [
      await request(server.url, "GET", unknownChannel),
      await api("GET", "/api/external/list-channels"),
      await request(server.url, "GET", "/api/openapi.json"),
      await request(server.url, "POST", "/api/oauth/token", "grant_type=x", { "content-type": "text/plain" }),
    ]) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    }
  });
});

describe("answers", () => {
  it("a JSON answer is written whole, with its Content-Length, not as a chunked transfer", async () => {
    for (const res of [await api("GET", "/api/external/list-channels"), await request(server.url, "GET", unknownChannel)]) {
      expect(res.headers.get("transfer-encoding")).toBeNull();
      expect(Number(res.headers.get("content-length"))).toBe(Buffer.byteLength(res.text));
    }
  });
});

describe("OpenAPI", () => {
  it("documents 413 for the external operations that take a body", async () => {
    const doc = (await request(server.url, "GET", "/api/openapi.json")).json as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const create = doc.paths["/api/external/create-channel"].post.responses["413"];
    expect(create.description).toMatch(/Payload Too Large.*1 MiB/);
    expect(doc.paths["/api/external/create-segment"].post.responses["413"].description).toMatch(/4 MiB/);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (["post", "put", "patch"].includes(method)) expect(op.responses["413"], `${method} ${path}`).toBeDefined();
      }
    }
  });
});
