import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, getDb } from "../../db/client";
import { rowsOf } from "../../db/params";
import { apiKeys } from "../../db/schema";
import { verifyApiKey } from "../../server/keys/verify-api-key";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("API keys and the key cache", () => {
  it("a key revoked in the dashboard answers 401 on its very next request (the cache forgets it)", async () => {
    const api = await newTenant(server.url);
    expect((await api("GET", "/api/external/list-settings")).status).toBe(200);
    expect((await api("GET", "/api/external/list-settings")).status).toBe(200); // now served from the cache
    const { db, provider } = await getServices();
    const dashboard = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    const [key] = await dashboard.apiKeys.list();
    await dashboard.apiKeys.revoke({ id: key.id });
    expectEnvelope(await api("GET", "/api/external/list-settings"), 401, "Unauthorized");
  });

  it("a revocation made by another process (straight in the database) takes effect within API_KEY_CACHE_SECONDS", async () => {
    process.env.API_KEY_CACHE_SECONDS = "1";
    try {
      const api = await newTenant(server.url);
      expect((await api("GET", "/api/external/list-settings")).status).toBe(200);
      const db = await getDb();
      await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.tenantId, api.tenantId));
      await new Promise((r) => setTimeout(r, 1100));
      expectEnvelope(await api("GET", "/api/external/list-settings"), 401, "Unauthorized");
    } finally {
      delete process.env.API_KEY_CACHE_SECONDS;
    }
  });

  it("last_used_at is written on first use, not on every request", async () => {
    const api = await newTenant(server.url);
    const db = await getDb();
    const lastUsed = async () => (await db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.tenantId, api.tenantId)))[0].at;
    expect(await lastUsed()).toBeNull();
    await api("GET", "/api/external/list-settings");
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    await api("GET", "/api/external/list-settings");
    expect((await lastUsed())?.getTime()).toBe(first!.getTime());
  });

  it("writing last_used_at does not wait for the WAL flush (a read's path): the touch commits asynchronously", async () => {
    const api = await newTenant(server.url);
    const db = await getDb();
    // In a transaction of its own, the statement's setting is still readable after it.
    const commit = await db.transaction(async (tx) => {
      expect((await verifyApiKey(tx as unknown as Db, api.key, new Date()))?.tenantId).toBe(api.tenantId);
      return rowsOf<{ synchronous_commit: string }>(await tx.execute(sql`show synchronous_commit`))[0].synchronous_commit;
    });
    expect(commit).toBe("off");
    const [row] = await db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.tenantId, api.tenantId));
    expect(row.at).toBeInstanceOf(Date);
  });
});
