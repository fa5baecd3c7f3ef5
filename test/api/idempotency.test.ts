import { and, count, eq } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels, idempotencyKeys } from "../../db/schema";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function channelCount(tenantId: string) {
  const db = await getDb();
  const [{ value }] = await db.select({ value: count() }).from(channels).where(eq(channels.tenantId, tenantId));
  return value;
}

const create = (t: Api, key: string, name = "Canal") => t("POST", "/api/external/create-channel", { name }, { "idempotency-key": key });

describe("Idempotency-Key", () => {
  it("replays the first answer byte for byte and creates one channel", async () => {
    const t = await newTenant(server.url);
    const key = randomUUID();
    const first = await create(t, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await create(t, key);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
    expect(await channelCount(t.tenantId)).toBe(1);
  });

  it("treats key order and white space as the same body", async () => {
    const t = await newTenant(server.url);
    const a = await t("POST", "/api/external/create-channel", '{"name":"Canal"}', { "idempotency-key": "k-ws" });
    const b = await t("POST", "/api/external/create-channel", '{ "name" : "Canal" }', { "idempotency-key": "k-ws" });
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.text).toBe(a.text);
  });

  it("422 when the same key comes with a different body", async () => {
    const t = await newTenant(server.url);
    await create(t, "reused", "A");
    const res = await create(t, "reused", "B");
    expect(expectEnvelope(res, 422, "Unprocessable Entity").code).toBe("idempotency_key_reused");
    expect(await channelCount(t.tenantId)).toBe(1);
  });

  it("400 for a key longer than 255 characters; 255 is fine", async () => {
    const t = await newTenant(server.url);
    expect(expectEnvelope(await create(t, "k".repeat(256)), 400, "Bad Request").message).toContain("Idempotency-Key");
    expect((await create(t, "k".repeat(255))).status).toBe(201);
  });

  it("concurrent identical requests create exactly one channel", async () => {
    const t = await newTenant(server.url);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(t, key)));
    for (const a of answers) expect([201, 409]).toContain(a.status);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.json.id_channel)).size).toBe(1);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.json.code).toBe("idempotency_in_progress");
    expect(await channelCount(t.tenantId)).toBe(1);
    const after = await create(t, key);
    expect(after.json.id_channel).toBe(created[0].json.id_channel);
  });

  it("stores 4xx answers and replays them", async () => {
    const t = await newTenant(server.url);
    const first = await t(
      "POST",
      "/api/external/create-segment",
      { name: "S", id_channel: ["channel_00000000-0000-4000-8000-000000000000"], groups: ["120363000000000001@g.us"] },
      { "idempotency-key": "seg-404" },
    );
    expect(first.status).toBe(404);
    const again = await t(
      "POST",
      "/api/external/create-segment",
      { name: "S", id_channel: ["channel_00000000-0000-4000-8000-000000000000"], groups: ["120363000000000001@g.us"] },
      { "idempotency-key": "seg-404" },
    );
    expect(again.status).toBe(404);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
  });

  it("does not store a 5xx: the retry runs again", async () => {
    const t = await newTenant(server.url);
    const { provider } = await getServices();
    const original = provider.createChannel.bind(provider);
    provider.createChannel = async () => {
      throw new Error("gateway exploded with secret details");
    };
    const failed = await create(t, "retry-after-500");
    provider.createChannel = original;
    expect(expectEnvelope(failed, 500, "Internal Server Error").message).not.toContain("secret");
    expect(await channelCount(t.tenantId)).toBe(0);
    const retried = await create(t, "retry-after-500");
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keys are scoped to the tenant", async () => {
    const a = await newTenant(server.url);
    const b = await newTenant(server.url);
    const ra = await create(a, "shared-key");
    const rb = await create(b, "shared-key");
    expect(rb.status).toBe(201);
    expect(rb.json.id_channel).not.toBe(ra.json.id_channel);
  });

  it("409 while the first request is in flight; an abandoned claim is taken over", async () => {
    const t = await newTenant(server.url);
    const db = await getDb();
    // A claim as left by a request still running (or a process that died mid-request).
    const { fingerprint } = await import("../../server/http/idempotency");
    const fp = fingerprint("POST", "/api/external/create-channel", { name: "Canal" });
    await db
      .insert(idempotencyKeys)
      .values({ tenantId: t.tenantId, key: "inflight", fingerprint: fp, state: "in_progress", lockedUntil: new Date(Date.now() + 60_000) });
    expect(expectEnvelope(await create(t, "inflight"), 409, "Conflict").code).toBe("idempotency_in_progress");
    await db
      .update(idempotencyKeys)
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where(and(eq(idempotencyKeys.tenantId, t.tenantId), eq(idempotencyKeys.key, "inflight")));
    expect((await create(t, "inflight")).status).toBe(201);
  });

  it("a key older than 24 h is forgotten", async () => {
    const t = await newTenant(server.url);
    const first = await create(t, "old-key");
    const db = await getDb();
    await db
      .update(idempotencyKeys)
      .set({ createdAt: new Date(Date.now() - 25 * 3600_000) })
      .where(and(eq(idempotencyKeys.tenantId, t.tenantId), eq(idempotencyKeys.key, "old-key")));
    const second = await create(t, "old-key");
    expect(second.status).toBe(201);
    expect(second.json.id_channel).not.toBe(first.json.id_channel);
  });

  it("is ignored on endpoints that do not take it", async () => {
    const t = await newTenant(server.url);
    const { json } = await t("POST", "/api/external/create-channel", { name: "X" });
    const a = await t("PUT", `/api/external/edit-channel/${json.id_channel}`, { name: "Y" }, { "idempotency-key": "edit" });
    expect(a.headers.get("idempotent-replayed")).toBeNull();
  });
});
