import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { rowsOf } from "../../db/params";
import { bucketsInDatabase } from "../../server/http/rate-limit";
import { expectEnvelope, newTenant, request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// This file's process has its own limiter settings (read when the limiters are first built).
process.env.RATE_LIMIT_API_KEY_PER_MINUTE = "5";
process.env.RATE_LIMIT_FAILED_AUTH_PER_MINUTE = "3";
process.env.RATE_LIMIT_OAUTH_IP_PER_MINUTE = "4";
// Behind one trusted proxy: each test picks its client address with X-Forwarded-For.
process.env.TRUST_PROXY = "1";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("rate limits", () => {
  it("allows 5 requests a minute per API key, then 429 with Retry-After and RateLimit-* headers", async () => {
    const t = await newTenant(server.url);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t("POST", "/api/external/create-channel", { name: `C${i}` });
      expect(res.status).toBe(201);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      remaining.push(res.headers.get("ratelimit-remaining")!);
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    const limited = await t("POST", "/api/external/create-channel", { name: "C6" });
    expect(expectEnvelope(limited, 429, "Too Many Requests").code).toBe("rate_limited");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("ratelimit-reset"))).toBeGreaterThan(0);

    const other = await newTenant(server.url);
    expect((await other("POST", "/api/external/create-channel", { name: "free" })).status).toBe(201);
  });

  it("on PostgreSQL the buckets are UNLOGGED: taking a point writes no WAL, so its commit waits for no flush", async () => {
    const db = await getDb();
    if (!bucketsInDatabase(db)) return; // PGlite: the buckets are the process's memory
    const relations = rowsOf<{ relname: string; relpersistence: string }>(
      await db.execute(sql`select c.relname, c.relpersistence from pg_class c where c.oid = 'rate_limit_buckets'::regclass
        or c.oid in (select indexrelid from pg_index where indrelid = 'rate_limit_buckets'::regclass)`),
    );
    expect(relations.length).toBeGreaterThanOrEqual(2);
    expect(relations.filter((r) => r.relpersistence !== "u")).toEqual([]);
    // The upsert itself, as rate-limiter-flexible's store runs it: no WAL record (a logged table writes 2 or more).
    const plan = rowsOf<{ "QUERY PLAN": [{ Plan: { "WAL Records": number } }] }>(
      await db.execute(sql`explain (analyze, wal, format json)
        insert into rate_limit_buckets (key, points, expire) values (${`wal-check:${randomUUID()}`}, 1, now() + interval '1 minute')
        on conflict (key) do update set points = rate_limit_buckets.points + excluded.points`),
    );
    expect(plan[0]["QUERY PLAN"][0].Plan["WAL Records"]).toBe(0);
  });

  it("blocks an address after 3 failed authentications a minute, before checking the key", async () => {
    // Fresh addresses: on PostgreSQL the buckets outlive this process.
    const octet = 1 + Math.floor(Math.random() * 200);
    const ip = { "x-forwarded-for": `203.0.113.${octet}` };
    for (let i = 0; i < 3; i++) {
      expectEnvelope(
        await request(server.url, "GET", "/api/external/list-groups/channel_00000000-0000-4000-8000-000000000000", undefined, {
          ...ip,
          "x-api-key": "sk_live_wrong",
        }),
        401,
        "Unauthorized",
      );
    }
    const blocked = await request(server.url, "GET", "/api/external/list-groups/channel_00000000-0000-4000-8000-000000000000", undefined, ip);
    expect(expectEnvelope(blocked, 429, "Too Many Requests").code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address is not affected.
    const elsewhere = await request(server.url, "GET", "/api/external/list-groups/channel_00000000-0000-4000-8000-000000000000", undefined, {
      "x-forwarded-for": `203.0.113.${octet + 1}`,
    });
    expectEnvelope(elsewhere, 401, "Unauthorized");
  });

  it("limits the OAuth endpoints per client address (4 a minute here), in the OAuth error shape", async () => {
    // Not a failed authentication (that limit is 3 here): a body of the wrong type, refused before client authentication.
    const ip = { "x-forwarded-for": `203.0.113.${201 + Math.floor(Math.random() * 50)}`, "content-type": "text/plain" };
    for (let i = 0; i < 4; i++) {
      const res = await request(server.url, "POST", "/api/oauth/token", "grant_type=refresh_token", ip);
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("invalid_request");
    }
    const limited = await request(server.url, "POST", "/api/oauth/token", "grant_type=refresh_token", ip);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("cache-control")).toMatch(/^no-store\b/);
  });
});
