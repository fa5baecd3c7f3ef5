import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { integrations } from "../../db/schema";
import { encryptSecret } from "../../server/crypto/secret-box";
import { reencryptIntegrations } from "../../server/integrations/list-integrations";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant, request, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url);
});
afterAll(() => server.close());

const hotmart = { client_id: "cid-123", client_secret: "segredo-hotmart", basic_token: "Basic abc" };

/** The dashboard's tRPC caller (session) for a tenant. */
async function dashboard(tenantId: string) {
  const { db, provider } = await getServices();
  return createCallerFactory(appRouter)({ db, provider, caller: { kind: "session", tenantId, userId: "u", role: "owner" }, now: new Date() });
}

describe("POST create-integrations", () => {
  it("401 without a key, before anything else", async () => {
    expectEnvelope(await request(server.url, "POST", "/api/external/create-integrations", { type: "nope" }), 401, "Unauthorized");
  });

  it("400 naming the field: type (with the allowed values), missing and unknown credentials", async () => {
    const cases: [unknown, string][] = [
      [{ credentials: hotmart }, "type"],
      [{ type: "shopify", credentials: {} }, "type: must be one of hotmart, kiwify, eduzz, monetizze, braip"],
      [{ type: "hotmart" }, "credentials"],
      [{ type: "hotmart", credentials: { client_id: "x", client_secret: "y" } }, "credentials.basic_token"],
      [{ type: "hotmart", credentials: { ...hotmart, password: "x" } }, "credentials.password"],
      [{ type: "braip", credentials: { api_token: "" } }, "credentials.api_token"],
      [{ type: "kiwify", credentials: { client_id: 1, client_secret: "s", account_id: "a" } }, "credentials.client_id"],
      [{ type: "eduzz", label: "", credentials: { email: "a@b.c", public_key: "p", api_key: "k" } }, "label"],
    ];
    for (const [body, field] of cases) {
      const env = expectEnvelope(await api("POST", "/api/external/create-integrations", body), 400, "Bad Request");
      expect(env.message, JSON.stringify(body)).toContain(field);
    }
  });

  it("501 not_implemented for a valid body, storing nothing (a retry answers 501 again)", async () => {
    for (let i = 0; i < 2; i++) {
      const env = expectEnvelope(
        await api("POST", "/api/external/create-integrations", { type: "monetizze", label: "Loja", credentials: { consumer_key: "ck" } }),
        501,
        "Not Implemented",
      );
      expect(env.code).toBe("not_implemented");
    }
    const rows = await (await getDb()).select().from(integrations).where(eq(integrations.tenantId, api.tenantId));
    expect(rows).toHaveLength(0);
  });

  it("409 when the type already exists (created in the dashboard); 400 still comes first", async () => {
    const t = await newTenant(server.url);
    const created = await (await dashboard(t.tenantId)).integrations.createFromDashboard({ type: "hotmart", label: "Minha Hotmart", credentials: hotmart });
    expect(created.integration).toMatchObject({
      id_integration: "hotmart",
      label: "Minha Hotmart",
      configured: true,
      fields: { client_id: true, client_secret: true, basic_token: true, hottok: false },
    });
    const env = expectEnvelope(await t("POST", "/api/external/create-integrations", { type: "hotmart", credentials: hotmart }), 409, "Conflict");
    expect(env.message).toContain("hotmart");
    expectEnvelope(await t("POST", "/api/external/create-integrations", { type: "hotmart", credentials: {} }), 400, "Bad Request");
    // Another type of the same tenant, or the same type of another tenant, is still 501.
    expectEnvelope(await t("POST", "/api/external/create-integrations", { type: "braip", credentials: { api_token: "t" } }), 501, "Not Implemented");
    expectEnvelope(await api("POST", "/api/external/create-integrations", { type: "hotmart", credentials: hotmart }), 501, "Not Implemented");
  });
});

describe("PATCH edit-integrations", () => {
  let t: Api;
  beforeAll(async () => {
    t = await newTenant(server.url);
    await (await dashboard(t.tenantId)).integrations.createFromDashboard({ type: "hotmart", credentials: hotmart });
  });

  it("401 without a key", async () => {
    expectEnvelope(
      await request(server.url, "PATCH", "/api/external/edit-integrations", { type: "hotmart", credentials: { hottok: "x" } }),
      401,
      "Unauthorized",
    );
  });

  it("404 when the type is not configured (here, or only at another tenant)", async () => {
    expectEnvelope(await t("PATCH", "/api/external/edit-integrations", { type: "kiwify", credentials: { client_id: "x" } }), 404, "Not Found");
    expectEnvelope(await api("PATCH", "/api/external/edit-integrations", { type: "hotmart", credentials: { hottok: "x" } }), 404, "Not Found");
  });

  it("400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "type"],
      [{ type: "hotmart" }, "credentials"],
      [{ type: "hotmart", credentials: {} }, "credentials"],
      [{ type: "hotmart", credentials: { token: "x" } }, "credentials.token"],
      [{ type: "hotmart", credentials: { client_id: null } }, "credentials.client_id"],
      [{ type: "kajabi", credentials: { x: "y" } }, "type"],
    ];
    for (const [body, field] of cases) {
      const env = expectEnvelope(await t("PATCH", "/api/external/edit-integrations", body), 400, "Bad Request");
      expect(env.message, JSON.stringify(body)).toContain(field);
    }
  });

  it("merges credentials, answers fields as booleans and never a value; stored encrypted", async () => {
    const res = await t("PATCH", "/api/external/edit-integrations", { type: "hotmart", credentials: { hottok: "tok-secreto", client_secret: "novo-segredo" } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      success: true,
      message: expect.any(String),
      integration: { id_integration: "hotmart", configured: true, fields: { client_id: true, client_secret: true, basic_token: true, hottok: true } },
    });
    expect(res.text).not.toContain("segredo");
    expect(res.text).not.toContain("tok-secreto");
    expect(res.text).not.toContain("cid-123");
    const [row] = await (await getDb())
      .select()
      .from(integrations)
      .where(and(eq(integrations.tenantId, t.tenantId), eq(integrations.type, "hotmart")));
    expect(row.credentials).toMatch(/^v1:/);
    expect(row.credentials).not.toContain("segredo");
    // Clearing an optional field.
    const cleared = await t("PATCH", "/api/external/edit-integrations", { type: "hotmart", credentials: { hottok: null } });
    expect(cleared.json.integration.fields.hottok).toBe(false);
    expect(cleared.json.integration.fields.client_id).toBe(true);
  });

  it("key rotation: rows under ENCRYPTION_KEY_PREVIOUS still read, and are rewritten under the current key", async () => {
    const u = await newTenant(server.url);
    const db = await getDb();
    const current = process.env.ENCRYPTION_KEY;
    process.env.ENCRYPTION_KEY = "chave-antiga-para-teste";
    const old = encryptSecret(JSON.stringify({ api_token: "velho" }));
    if (current === undefined) delete process.env.ENCRYPTION_KEY;
    else process.env.ENCRYPTION_KEY = current;
    process.env.ENCRYPTION_KEY_PREVIOUS = "chave-antiga-para-teste";
    try {
      await db.insert(integrations).values({ tenantId: u.tenantId, type: "braip", label: "Braip", credentials: old });
      const res = await u("PATCH", "/api/external/edit-integrations", { type: "braip", label: "Braip loja" });
      expect(res.json.integration).toMatchObject({ label: "Braip loja", fields: { api_token: true } });
      const [row] = await db
        .select()
        .from(integrations)
        .where(and(eq(integrations.tenantId, u.tenantId), eq(integrations.type, "braip")));
      expect(row.credentials.split(":")[1]).not.toBe(old.split(":")[1]);
      await db
        .update(integrations)
        .set({ credentials: old })
        .where(and(eq(integrations.tenantId, u.tenantId), eq(integrations.type, "braip")));
      expect((await reencryptIntegrations(db)).rewritten).toBeGreaterThanOrEqual(1);
      expect((await reencryptIntegrations(db)).rewritten).toBe(0);
    } finally {
      if (current === undefined) delete process.env.ENCRYPTION_KEY;
      else process.env.ENCRYPTION_KEY = current;
      delete process.env.ENCRYPTION_KEY_PREVIOUS;
    }
  });
});
