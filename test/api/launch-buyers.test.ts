/**
 * Buyers through the marketplaces' inbound webhooks (docs/integrations.md#inbound-webhooks-buyers): a signed
 * Hotmart 2.0.0 PURCHASE_APPROVED for a member shows as a buyer of that group in launch-analytics and in the
 * members CSV and emits one group_activity `purchase`; a bad hottok is 401 and records nothing; the same notice
 * twice counts once; PURCHASE_REFUNDED undoes it. Kiwify: a signed order (HMAC-SHA1 of the body with the
 * webhook's token) for a member who joined by LID, its bad signature 401, a chargeback undoing it. Then the
 * URL's own answers: unknown token 404, an unconfirmed platform 501, an integration without its secret 401, an
 * ignored event, a missing transaction 400, a body over the cap 413, and a lead matched by email.
 */
import { createHmac } from "node:crypto";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channelLidPhones, purchases } from "../../db/schema";
import { createIntegration } from "../../server/integrations/create-integration";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { eventBody } from "../../server/webhooks/events";
import { emitParticipants, groupActivity, launchWithGroups } from "../launches/fixtures";
import { expectEnvelope, request } from "../helpers";
import { HOTTOK, hooksToken, hotmartBody, hotmartCreds, postHotmartTo } from "../launches/purchases";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const KIWIFY_TOKEN = "token-do-webhook-kiwify";
const kiwifyCreds = { client_id: "cid", client_secret: "cs", account_id: "acc", webhook_token: KIWIFY_TOKEN };

async function purchaseRows(tenantId: string) {
  const db = await getDb();
  const [{ n }] = await db.select({ n: count() }).from(purchases).where(eq(purchases.tenantId, tenantId));
  return n;
}

const postHotmart = (url: string, body: unknown, hottok = HOTTOK) => postHotmartTo(server.url, url, body, hottok);

const kiwifySignature = (raw: string, token = KIWIFY_TOKEN) => createHmac("sha1", token).update(raw).digest("hex");

async function analytics(api: (m: string, p: string) => Promise<{ json: any }>, id: string) {
  return (await api("GET", `/api/external/launch-analytics/${id}?days=7`)).json;
}

/** The members CSV's rows as {participant, id_group, buyer}. */
async function csvRows(api: (m: string, p: string) => Promise<{ text: string }>, id: string) {
  const lines = (await api("GET", `/api/external/launch-members/${id}?format=csv`)).text
    .replace(/^\uFEFF/, "")
    .trimEnd()
    .split("\r\n");
  expect(lines[0]).toBe("participant,id_group,group_name,joined_at,left_at,staff,buyer");
  return lines.slice(1).map((l) => {
    const f = l.split(",");
    return { participant: f[0], id_group: f[1], buyer: f[6] };
  });
}

const purchaseEvents = async (tenantId: string) => (await groupActivity(tenantId)).filter((e) => e.event === "purchase");

describe("inbound webhooks: Hotmart", () => {
  it("a signed PURCHASE_APPROVED for a member: buyer of that group (analytics, CSV), one `purchase` event; twice counts once; a bad hottok records nothing; PURCHASE_REFUNDED undoes it", async () => {
    const l = await launchWithGroups(server.url);
    const [g1, g2] = l.groups;
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "hotmart", credentials: hotmartCreds }, new Date());
    const url = `/api/hooks/hotmart/${await hooksToken(l.api.tenantId)}`;
    await emitParticipants(l.channel, g1, "join", ["5511999990001", "5511999990002"]);
    await emitParticipants(l.channel, g2, "join", ["5511999990003"]);

    // A bad hottok: 401, nothing recorded, no event.
    const forged = await postHotmart(url, hotmartBody("PURCHASE_APPROVED", "HP0001", "(11) 99999-0001"), "outro-hottok");
    expectEnvelope(forged, 401, "Unauthorized");
    const unsigned = await request(server.url, "POST", url, hotmartBody("PURCHASE_APPROVED", "HP0001", "11999990001"));
    expectEnvelope(unsigned, 401, "Unauthorized");
    expect(await purchaseRows(l.api.tenantId)).toBe(0);
    expect(await purchaseEvents(l.api.tenantId)).toEqual([]);
    expect((await analytics(l.api, l.id)).buyers).toBe(0);

    // Signed: recorded, the buyer of g1; the same notice again changes nothing.
    const body = hotmartBody("PURCHASE_APPROVED", "HP0001", "(11) 99999-0001");
    const first = await postHotmart(url, body);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ success: true, event: "PURCHASE_APPROVED", status: "approved", recorded: true, launches: 1 });
    const again = await postHotmart(url, body);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ success: true, recorded: false, launches: 0 });
    expect(await purchaseRows(l.api.tenantId)).toBe(1);

    const a = await analytics(l.api, l.id);
    expect(a.buyers).toBe(1);
    expect(a.groups.map((g: any) => [g.id_group, g.buyers])).toEqual([
      [g1, 1],
      [g2, 0],
    ]);
    expect(a.days.reduce((sum: number, d: any) => sum + d.buyers, 0)).toBe(1);
    expect(a.days.at(-1).buyers).toBe(1);
    const rows = await csvRows(l.api, l.id);
    expect(rows.filter((r) => r.buyer === "true").map((r) => r.participant)).toEqual(["5511999990001"]);
    expect(rows.find((r) => r.participant === "5511999990002")?.buyer).toBe("false");
    const json = (await l.api("GET", `/api/external/launch-members/${l.id}`)).json;
    expect(json.members.find((m: any) => m.participant === "5511999990001").buyer).toBe(true);

    const events = await purchaseEvents(l.api.tenantId);
    expect(events).toEqual([
      {
        event: "purchase",
        id_launch: l.id,
        status: "approved",
        platform: "hotmart",
        transaction: "HP0001",
        phone: "5511999990001",
        product: "Curso Turma 7",
        amount: "497",
        currency: "BRL",
        id_group: g1,
      },
    ]);
    expect(eventBody("group_activity").safeParse({ type: "group_activity", timestamp: new Date().toISOString(), data: events[0] }).success).toBe(true);

    // A forged refund is refused: the buyer still counts.
    expectEnvelope(await postHotmart(url, hotmartBody("PURCHASE_REFUNDED", "HP0001", "11999990001"), "x"), 401, "Unauthorized");
    expect((await analytics(l.api, l.id)).buyers).toBe(1);

    // The refund: the buyer no longer counts anywhere; the refund's event names the group.
    const refund = await postHotmart(url, hotmartBody("PURCHASE_REFUNDED", "HP0001", "11999990001"));
    expect(refund.json).toMatchObject({ success: true, status: "refunded", recorded: true, launches: 1 });
    const after = await analytics(l.api, l.id);
    expect(after.buyers).toBe(0);
    expect(after.groups.map((g: any) => g.buyers)).toEqual([0, 0]);
    expect(after.days.every((d: any) => d.buyers === 0)).toBe(true);
    expect((await csvRows(l.api, l.id)).every((r) => r.buyer === "false")).toBe(true);
    expect((await purchaseEvents(l.api.tenantId)).map((e) => [e.status, e.id_group])).toEqual([
      ["approved", g1],
      ["refunded", g1],
    ]);
  });

  it("a lead who never joined, matched by email when the checkout has no phone: a buyer of the launch, in no group", async () => {
    const l = await launchWithGroups(server.url);
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "hotmart", credentials: hotmartCreds }, new Date());
    const url = `/api/hooks/hotmart/${await hooksToken(l.api.tenantId)}`;
    await l.api("POST", `/api/external/launch-leads/${l.id}`, { leads: [{ phone: "11988887777", email: "Lead@Example.com" }] });
    const res = await postHotmart(url, hotmartBody("PURCHASE_APPROVED", "HP0002", null, { email: "lead@example.com" }));
    expect(res.json).toMatchObject({ recorded: true, launches: 1 });
    const a = await analytics(l.api, l.id);
    expect(a.buyers).toBe(1);
    expect(a.groups.every((g: any) => g.buyers === 0)).toBe(true);
    expect((await purchaseEvents(l.api.tenantId)).map((e) => [e.phone, e.id_group])).toEqual([["5511988887777", null]]);
  });
});

describe("inbound webhooks: Kiwify", () => {
  it("a signed order for a member who joined by LID: buyer of that group; a bad signature is 401 and records nothing; a chargeback undoes it", async () => {
    const l = await launchWithGroups(server.url);
    const [, g2] = l.groups;
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "kiwify", credentials: kiwifyCreds }, new Date());
    const url = `/api/hooks/kiwify/${await hooksToken(l.api.tenantId)}`;
    // She joined as a LID; the launch's number learned her phone afterwards (her row stays under the LID).
    await emitParticipants(l.channel, g2, "join", ["700000000000009@lid"]);
    await db.insert(channelLidPhones).values({ channelId: l.channel, lid: "700000000000009@lid", phone: "5521988880009", learnedAt: new Date() });

    const order = (status: string, event: string) =>
      JSON.stringify({
        order_id: "b6ba3959-30b5-44fc-a3e5-2c61e3d68ee5",
        order_ref: "Zt8KmLp",
        order_status: status,
        webhook_event_type: event,
        payment_method: "pix",
        Product: { product_id: "prod-1", product_name: "Curso Turma 7" },
        Customer: { full_name: "Maria Souza", email: "maria@example.com", mobile: "+5521988880009" },
      });
    const paid = order("paid", "order_approved");

    for (const signature of ["", kiwifySignature(paid, "outro-token"), kiwifySignature(`${paid} `), "zz"]) {
      const q = signature ? `?signature=${signature}` : "";
      expectEnvelope(await request(server.url, "POST", url + q, paid), 401, "Unauthorized");
    }
    expect(await purchaseRows(l.api.tenantId)).toBe(0);
    expect(await purchaseEvents(l.api.tenantId)).toEqual([]);

    const ok = await request(server.url, "POST", `${url}?signature=${kiwifySignature(paid)}`, paid);
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ success: true, event: "order_approved", status: "approved", recorded: true, launches: 1 });
    const a = await analytics(l.api, l.id);
    expect(a.buyers).toBe(1);
    expect(a.groups.map((g: any) => g.buyers)).toEqual([0, 1]);
    // The CSV's row is still the LID, resolved through the pairing: a buyer.
    expect((await csvRows(l.api, l.id)).map((r) => [r.participant, r.id_group, r.buyer])).toEqual([["700000000000009@lid", g2, "true"]]);
    expect((await purchaseEvents(l.api.tenantId)).map((e) => [e.platform, e.status, e.id_group, e.amount])).toEqual([["kiwify", "approved", g2, null]]);

    const chargeback = order("chargedback", "chargeback");
    const cb = await request(server.url, "POST", `${url}?signature=${kiwifySignature(chargeback)}`, chargeback);
    expect(cb.json).toMatchObject({ status: "refunded", recorded: true });
    expect((await analytics(l.api, l.id)).buyers).toBe(0);
  });
});

describe("inbound webhooks: the URL", () => {
  it("404 for an unknown token or type, 501 for a platform whose webhook is not confirmed, 404 without the integration, 401 without its secret", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const token = await hooksToken(l.api.tenantId);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const body = hotmartBody("PURCHASE_APPROVED", "HP0100", "11999990001");
    expectEnvelope(await postHotmart(`/api/hooks/hotmart/${"0".repeat(64)}`, body), 404, "Not Found");
    expectEnvelope(await postHotmart(`/api/hooks/shopify/${token}`, body), 404, "Not Found");
    for (const type of ["eduzz", "monetizze", "braip"]) {
      const res = await request(server.url, "POST", `/api/hooks/${type}/${token}`, { any: "thing" });
      expectEnvelope(res, 501, "Not Implemented");
      expect(res.json.message).toContain("could not be confirmed");
    }
    expect(expectEnvelope(await postHotmart(`/api/hooks/hotmart/${token}`, body), 404, "Not Found").code).toBe("integration_not_configured");
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "hotmart", credentials: { client_id: "a", client_secret: "b", basic_token: "c" } }, new Date());
    expectEnvelope(await postHotmart(`/api/hooks/hotmart/${token}`, body, ""), 401, "Unauthorized");
    expect(await purchaseRows(l.api.tenantId)).toBe(0);
    expect((await request(server.url, "GET", `/api/hooks/hotmart/${token}`)).status).toBe(405);
  });

  it("rotate-hooks-token: new URLs answered (API and dashboard), the old token is 404 at once, the new one works", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "hotmart", credentials: hotmartCreds }, new Date());
    const old = await hooksToken(l.api.tenantId);
    const ignored = hotmartBody("PURCHASE_BILLET_PRINTED", "HP0300", "11999990001");
    expect((await postHotmart(`/api/hooks/hotmart/${old}`, ignored)).status).toBe(200);
    const rotated = await l.api("POST", "/api/external/rotate-hooks-token");
    expect(rotated.status).toBe(200);
    const fresh = await hooksToken(l.api.tenantId);
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(fresh).not.toBe(old);
    expect(rotated.json.webhook_urls).toContainEqual({ type: "hotmart", webhook_url: expect.stringMatching(new RegExp(`/api/hooks/hotmart/${fresh}$`)) });
    expectEnvelope(await postHotmart(`/api/hooks/hotmart/${old}`, ignored), 404, "Not Found");
    expect((await postHotmart(`/api/hooks/hotmart/${fresh}`, ignored)).status).toBe(200);
    // The dashboard's button (tRPC, a session) does the same, and the page's list shows the new URL.
    const { db: sdb, provider } = await getServices();
    const dashboard = createCallerFactory(appRouter)({
      db: sdb,
      provider,
      caller: { kind: "session", tenantId: l.api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    const again = await dashboard.integrations.rotateHooksToken({});
    const newest = await hooksToken(l.api.tenantId);
    expect(newest).not.toBe(fresh);
    expect((await dashboard.integrations.list()).types.find((t) => t.type === "hotmart")?.webhook_url).toBe(
      again.webhook_urls.find((u) => u.type === "hotmart")?.webhook_url,
    );
    expectEnvelope(await postHotmart(`/api/hooks/hotmart/${fresh}`, ignored), 404, "Not Found");
  });

  it("an event it does not use is acknowledged and ignored; a missing transaction or another version is 400 naming the field; a body over 256 KiB is 413", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "hotmart", credentials: hotmartCreds }, new Date());
    const url = `/api/hooks/hotmart/${await hooksToken(l.api.tenantId)}`;
    const billet = await postHotmart(url, hotmartBody("PURCHASE_BILLET_PRINTED", "HP0200", "11999990001"));
    expect(billet.status).toBe(200);
    expect(billet.json).toEqual({ success: true, event: "PURCHASE_BILLET_PRINTED", recorded: false, ignored: true });
    const noTransaction = hotmartBody("PURCHASE_APPROVED", "", "11999990001");
    expect(expectEnvelope(await postHotmart(url, noTransaction), 400, "Bad Request").message).toContain("data.purchase.transaction");
    expect(
      expectEnvelope(await postHotmart(url, { ...hotmartBody("PURCHASE_APPROVED", "HP0201", null), version: "1.0.0" }), 400, "Bad Request").message,
    ).toContain("version");
    const big = { ...hotmartBody("PURCHASE_APPROVED", "HP0202", null), pad: "x".repeat(300 * 1024) };
    expectEnvelope(await postHotmart(url, big), 413, "Payload Too Large");
    expect(await purchaseRows(l.api.tenantId)).toBe(0);
  });

  it("the integration's answer carries the URL to register; null for a platform whose webhook is not confirmed", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const db = await getDb();
    await createIntegration(db, l.api.tenantId, { type: "kiwify", credentials: kiwifyCreds }, new Date());
    await createIntegration(db, l.api.tenantId, { type: "braip", credentials: { api_token: "t" } }, new Date());
    const token = await hooksToken(l.api.tenantId);
    const kiwify = await l.api("PATCH", "/api/external/edit-integrations", { type: "kiwify", label: "Loja" });
    expect(kiwify.json.integration.webhook_url).toMatch(new RegExp(`/api/hooks/kiwify/${token}$`));
    expect(kiwify.json.integration.fields).toMatchObject({ webhook_token: true });
    const braip = await l.api("PATCH", "/api/external/edit-integrations", { type: "braip", label: "Loja" });
    expect(braip.json.integration.webhook_url).toBeNull();
  });
});
