import { randomBytes, randomUUID } from "node:crypto";
import { eq, like } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { rateLimitBuckets, tenants } from "../../db/schema";
import { createIntegration } from "../../server/integrations/create-integration";
import { bucketsInDatabase } from "../../server/http/rate-limit";
import { throttledRetryAfter } from "../../server/auth/sign-in-error";
import { attemptSignIn } from "../auth/sign-in-client";
import { expectEnvelope, newTenant, request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

/**
 * CONTRACT §4 "Per-address keys": every per-address limit keys an IPv6 client by its /64 (one host owns
 * a whole /64) and is kept in the shared store. Each case spends a limit from one address of a /64 and
 * finds it spent from another address of the same /64, and not from the neighbouring /64.
 * Limits are lowered for this file (its own process: the limiters read them when first built).
 */
process.env.RATE_LIMIT_SIGN_IN_PER_ADDRESS = "2";
process.env.RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR = "2";
process.env.RATE_LIMIT_FAILED_AUTH_PER_MINUTE = "3";
process.env.RATE_LIMIT_OAUTH_IP_PER_MINUTE = "3";
// Behind one trusted proxy: each request picks its client address with X-Forwarded-For.
process.env.TRUST_PROXY = "1";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A fresh /64 (documentation prefix 2001:db8::/32) and two addresses in it, plus one in the next /64. */
function slash64() {
  // Groups without leading zeros, as addressKey writes them.
  const [a, b] = [randomBytes(2).readUInt16BE(), randomBytes(2).readUInt16BE()];
  const prefix = `2001:db8:${a.toString(16)}:${b.toString(16)}`;
  const next = `2001:db8:${a.toString(16)}:${((b + 1) & 0xffff).toString(16)}`;
  return { prefix, first: `${prefix}::1`, second: `${prefix}:9a3c:11ff:fe02:7b41`, neighbour: `${next}::1` };
}

const from = (address: string) => ({ "x-forwarded-for": address });

/** On PostgreSQL the buckets are rows of rate_limit_buckets (shared by every process): one per /64, none per address. */
async function expectOneBucketPer64(limit: string, net: ReturnType<typeof slash64>) {
  const db = await getDb();
  if (!bucketsInDatabase(db)) return; // PGlite: one process owns the database, its memory is the shared place.
  const rows = await db
    .select({ key: rateLimitBuckets.key })
    .from(rateLimitBuckets)
    .where(like(rateLimitBuckets.key, `${limit}:2001:db8:%`));
  const keys = rows.map((r) => r.key).filter((k) => k.startsWith(`${limit}:${net.prefix}`));
  expect(keys).toEqual([`${limit}:${net.prefix}::/64`]);
}

describe("per-address limits key an IPv6 client by its /64", () => {
  it("sign-in: failures from one address of a /64 spend the budget of every address in it", async () => {
    const net = slash64();
    for (const address of [net.first, net.second]) {
      const a = await attemptSignIn(server.url, `x-${randomUUID()}@example.test`, "errada-xxxxxx", from(address));
      expect(a.error).toBe("CredentialsSignin");
    }
    const refused = await attemptSignIn(server.url, `y-${randomUUID()}@example.test`, "errada-xxxxxx", from(`${net.prefix}::abcd`));
    expect(throttledRetryAfter(refused.error), String(refused.error)).toBeGreaterThan(0);
    expect((await attemptSignIn(server.url, `z-${randomUUID()}@example.test`, "errada-xxxxxx", from(net.neighbour))).error).toBe("CredentialsSignin");
    await expectOneBucketPer64("signInAddress", net);
  }, 60_000);

  it("sign-up: two sign-ups from two addresses of one /64 spend its hourly budget", async () => {
    const net = slash64();
    const signUp = (address: string) =>
      request(
        server.url,
        "POST",
        "/api/trpc/account.signUp",
        { name: "Loja", email: `s-${randomUUID()}@example.test`, password: "senha-segura-123" },
        { ...from(address), origin: server.url },
      );
    expect((await signUp(net.first)).status).toBe(200);
    expect((await signUp(net.second)).status).toBe(200);
    const limited = await signUp(`${net.prefix}::77`);
    expect(limited.status, limited.text).toBe(429);
    expect(limited.json.error.data.domainCode).toBe("sign_up_limited");
    expect((await signUp(net.neighbour)).status).toBe(200);
    await expectOneBucketPer64("signUpAddress", net);
  }, 60_000);

  it("failed authentication: wrong API keys from one /64 block all of it", async () => {
    const net = slash64();
    const call = (address: string) =>
      request(server.url, "GET", "/api/external/list-settings", undefined, { ...from(address), "x-api-key": `sk_live_${"w".repeat(40)}` });
    for (const address of [net.first, net.second, net.first]) expectEnvelope(await call(address), 401, "Unauthorized");
    expect(expectEnvelope(await call(`${net.prefix}::5`), 429, "Too Many Requests").code).toBe("rate_limited");
    expectEnvelope(await call(net.neighbour), 401, "Unauthorized");
    await expectOneBucketPer64("failedAuth", net);
  });

  it("inbound webhooks (/api/hooks): unknown tokens and wrong signatures from one /64 block all of it, a right one included", async () => {
    const net = slash64();
    const owner = await newTenant(server.url);
    const db = await getDb();
    await createIntegration(
      db,
      owner.tenantId,
      { type: "hotmart", credentials: { client_id: "a", client_secret: "b", basic_token: "c", hottok: "certo" } },
      new Date(),
    );
    const [{ token }] = await db.select({ token: tenants.hooksToken }).from(tenants).where(eq(tenants.id, owner.tenantId));
    const hook = (address: string, path: string, hottok: string) =>
      request(server.url, "POST", path, JSON.stringify({ event: "PURCHASE_BILLET_PRINTED", version: "2.0.0" }), {
        ...from(address),
        "content-type": "application/json",
        "x-hotmart-hottok": hottok,
      });
    const right = `/api/hooks/hotmart/${token}`;
    expectEnvelope(await hook(net.first, `/api/hooks/hotmart/${"a".repeat(64)}`, "certo"), 404, "Not Found");
    expectEnvelope(await hook(net.second, right, "errado"), 401, "Unauthorized");
    expectEnvelope(await hook(net.first, `/api/hooks/hotmart/${"b".repeat(64)}`, "certo"), 404, "Not Found");
    // Spent: the next attempt from the /64 is 429 before any look-up, even with the right URL and hottok.
    expect(expectEnvelope(await hook(`${net.prefix}::5`, right, "certo"), 429, "Too Many Requests").code).toBe("rate_limited");
    expect((await hook(net.neighbour, right, "certo")).status).toBe(200);
    await expectOneBucketPer64("failedAuth", net);
  });

  it("OAuth endpoints: requests from one /64 share its per-minute budget", async () => {
    const net = slash64();
    // A body of the wrong type: refused before client authentication, so only the OAuth limit counts.
    const call = (address: string) =>
      request(server.url, "POST", "/api/oauth/token", "grant_type=refresh_token", { ...from(address), "content-type": "text/plain" });
    for (const address of [net.first, net.second, `${net.prefix}::3`]) expect((await call(address)).status).toBe(400);
    const limited = await call(`${net.prefix}:ffff:ffff:ffff:ffff`);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe("rate_limited");
    expect((await call(net.neighbour)).status).toBe(400);
    await expectOneBucketPer64("oauthIp", net);
  });

  it("an IPv4 client is keyed by its whole address, and its IPv4-mapped IPv6 form is the same client", async () => {
    const octet = 1 + Math.floor(Math.random() * 200);
    const call = (address: string) =>
      request(server.url, "GET", "/api/external/list-settings", undefined, { ...from(address), "x-api-key": `sk_live_${"w".repeat(40)}` });
    for (const address of [`203.0.113.${octet}`, `::ffff:203.0.113.${octet}`, `203.0.113.${octet}`]) expectEnvelope(await call(address), 401, "Unauthorized");
    expectEnvelope(await call(`203.0.113.${octet}`), 429, "Too Many Requests");
    expectEnvelope(await call(`203.0.113.${octet + 1}`), 401, "Unauthorized");
  });
});
