/**
 * A launch's leads (docs/launches.md#leads) through the REST facade: the upload (idempotent by phone,
 * phones normalised), info-launch's `leads` / `leads_joined`, the list by status in JSON and CSV (one lead
 * joined by a LID resolved through the launch's channel's LID ⇄ phone map), validation and other tenants.
 */
import { count, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channelLidPhones, launchLeads, launchParticipants } from "../../db/schema";
import { emitParticipants, launchWithGroups } from "../launches/fixtures";
import { expectEnvelope, newTenant } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const LEADS = (id: string, q = "") => `/api/external/launch-leads/${id}${q}`;
const unknownLaunch = "launch_00000000-0000-4000-8000-000000000000";

describe("launch-leads", () => {
  it("counts a lead uploaded twice once; not_joined lists exactly who never joined (one joined by a LID)", async () => {
    const l = await launchWithGroups(server.url);
    const [g1, g2] = l.groups;
    const leads = [
      { phone: "+55 (11) 99999-0001", name: "Ana", email: "ana@example.com", source: "form-a" }, // joins by phone
      { phone: "11 99999-0002", name: "Bia" }, // joins by a LID paired with her phone
      { phone: "5511999990003", name: "Caio" }, // never joins
      { phone: "(21) 98888-0004" }, // joins as an old account, without the ninth digit
      { phone: "5511999990005", name: "Edu" }, // a LID another account's channel paired with him joins: not him
      { phone: "+1 415 555 0106", name: "Fay" }, // never joins
    ];
    const first = await l.api("POST", LEADS(l.id), { leads });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ success: true, id_launch: l.id, received: 6, created: 6, updated: 0, leads: 6, leads_joined: 0 });

    // The same list again, one name changed and one lead twice in the request: still six leads.
    const again = await l.api("POST", LEADS(l.id), { leads: [...leads.slice(0, 2), { phone: "5511999990003", name: "Caio S." }, ...leads.slice(3), leads[0]] });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ received: 7, created: 0, updated: 7, leads: 6 });

    // Another account's channel, with a pairing of its own for a LID that joins this launch.
    const stranger = await newTenant(server.url);
    const { json: otherChannel } = await stranger("POST", "/api/external/create-channel", { name: "Outro" });
    const db = await getDb();
    await db.insert(channelLidPhones).values([
      { channelId: l.channel, lid: "700000000000002@lid", phone: "5511999990002", learnedAt: new Date() },
      { channelId: otherChannel.id_channel, lid: "700000000000005@lid", phone: "5511999990005", learnedAt: new Date() },
    ]);
    await emitParticipants(l.channel, g1, "join", ["5511999990001", "700000000000002@lid", "5599999990099"]);
    await emitParticipants(l.channel, g2, "join", ["552188880004", "700000000000005@lid"]);
    // Ana leaves: she joined, so she is not sent the link again.
    await emitParticipants(l.channel, g1, "leave", ["5511999990001"]);

    const info = await l.api("GET", `/api/external/info-launch/${l.id}`);
    expect(info.json.totals).toMatchObject({ leads: 6, leads_joined: 3 });

    const notJoined = await l.api("GET", LEADS(l.id, "?status=not_joined"));
    expect(notJoined.status).toBe(200);
    expect(notJoined.json).toMatchObject({ success: true, status: "not_joined", page: 1, per_page: 500, total: 3 });
    expect(notJoined.json.leads.map((r: { phone: string }) => r.phone).sort()).toEqual(["14155550106", "5511999990003", "5511999990005"]);
    expect(notJoined.json.leads.find((r: { phone: string }) => r.phone === "5511999990003")).toMatchObject({ name: "Caio S.", joined: false });

    const joined = await l.api("GET", LEADS(l.id, "?status=joined&format=json"));
    expect(joined.json.leads.map((r: { phone: string }) => r.phone).sort()).toEqual(["5511999990001", "5511999990002", "5521988880004"]);
    expect(joined.json.leads.find((r: { phone: string }) => r.phone === "5511999990001")).toMatchObject({
      name: "Ana",
      email: "ana@example.com",
      source: "form-a",
      joined: true,
    });
    expect((await l.api("GET", LEADS(l.id))).json).toMatchObject({ status: "all", total: 6 });

    const csv = await fetch(`${server.url}${LEADS(l.id, "?status=not_joined&format=csv")}`, { headers: { "x-api-key": l.api.key } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    // fetch's text() drops the BOM: read the bytes.
    const bytes = new Uint8Array(await csv.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    expect(text.startsWith("\uFEFFphone,name,email,source,joined,created_at\r\n")).toBe(true);
    const lines = text.slice(1).trimEnd().split("\r\n").slice(1);
    expect(lines.map((line) => line.split(",")[0]).sort()).toEqual(["14155550106", "5511999990003", "5511999990005"]);
    expect(lines.find((line) => line.startsWith("5511999990003,"))).toMatch(/^5511999990003,Caio S\.,,,false,\d{4}-/);
  });

  it("refuses bad items with 400 naming the field, and writes nothing", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const good = Array.from({ length: 20 }, (_, i) => ({ phone: `55119888800${String(i).padStart(2, "0")}` }));
    const cases: [unknown, string][] = [
      [{ leads: good.map((g, i) => (i === 17 ? { phone: "12345" } : g)) }, "leads.17.phone"],
      [{ leads: good.map((g, i) => (i === 3 ? { phone: "55 11 9abc" } : g)) }, "leads.3.phone"],
      [{ leads: good.map((g, i) => (i === 4 ? { phone: 5511988880004 } : g)) }, "leads.4.phone"],
      [{ leads: good.map((g, i) => (i === 5 ? { ...g, email: "not-an-email" } : g)) }, "leads.5.email"],
      [{ leads: good.map((g, i) => (i === 6 ? { ...g, name: "x".repeat(121) } : g)) }, "leads.6.name"],
      [{ leads: good.map((g, i) => (i === 7 ? { ...g, source: "s".repeat(201) } : g)) }, "leads.7.source"],
      [{ leads: [] }, "leads"],
      [{ leads: Array.from({ length: 10_001 }, (_, i) => ({ phone: `5511${String(900000000 + i)}` })) }, "leads"],
      [{}, "leads"],
    ];
    for (const [body, field] of cases) {
      const res = await l.api("POST", LEADS(l.id), body);
      expect(expectEnvelope(res, 400, "Bad Request").message, JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    const db = await getDb();
    expect(await db.select().from(launchLeads).where(eq(launchLeads.launchId, l.id))).toEqual([]);
    const bad = await l.api("GET", LEADS(l.id, "?status=gone"));
    expect(expectEnvelope(bad, 400, "Bad Request").message).toContain("status");
  });

  it("takes 10,000 leads with every field in one request", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const leads = Array.from({ length: 10_000 }, (_, i) => ({
      phone: `+55 (11) 9${String(10000000 + i)}`,
      name: `Pessoa ${"n".repeat(100)} ${i}`,
      email: `pessoa.${i}.${"e".repeat(40)}@${"d".repeat(60)}.example.com`,
      source: `formulario-${"s".repeat(180)}`,
    }));
    const res = await l.api("POST", LEADS(l.id), { leads });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ received: 10_000, created: 10_000, leads: 10_000 });
    const page = await l.api("GET", LEADS(l.id, "?status=not_joined&page=20"));
    expect(page.json).toMatchObject({ page: 20, total: 10_000 });
    expect(page.json.leads).toHaveLength(500);
  });

  it("keeps at most 200,000 leads per launch: an upload that would pass it is 400 naming leads, and nothing of it is written", {
    timeout: 120_000,
  }, async () => {
    const l = await launchWithGroups(server.url);
    const db = await getDb();
    // 199,998 leads already there (written straight to the table: the cap is what is tested, not 20 uploads).
    await db.execute(
      sql`insert into launch_leads (launch_id, phone, match_key) select ${l.id}, p, p from (select '5521' || lpad(g::text, 9, '0') as p from generate_series(1, 199998) g) s`,
    );
    const fresh = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ phone: `55319${String(from + i).padStart(8, "0")}`, name: "Novo" }));
    // PGlite runs in this process: the insert held the event loop, so let the server's idle keep-alive sockets close
    // before the next request rather than race it.
    await new Promise((r) => setTimeout(r, 200));
    const refused = await l.api("POST", LEADS(l.id), { leads: [...fresh(3, 1), { phone: "5521000000001", name: "Já estava" }] });
    const body = expectEnvelope(refused, 400, "Bad Request");
    expect(body.message).toMatch(/^leads: /);
    expect(body).toMatchObject({ code: "leads_limit", current: 199_998, max: 200_000 });
    const [{ n, named }] = await db
      .select({ n: count(), named: count(launchLeads.name) })
      .from(launchLeads)
      .where(eq(launchLeads.launchId, l.id));
    expect([n, named]).toEqual([199_998, 0]);
    // Up to the cap is fine, and updating leads it already has always is.
    expect((await l.api("POST", LEADS(l.id), { leads: fresh(2, 1) })).json).toMatchObject({ created: 2, leads: 200_000 });
    expect((await l.api("POST", LEADS(l.id), { leads: [{ phone: "5521000000001", name: "Atualizado" }] })).json).toMatchObject({ created: 0, updated: 1 });
    expectEnvelope(await l.api("POST", LEADS(l.id), { leads: fresh(1, 50) }), 400, "Bad Request");
  });

  it("CSV exports stream (chunked, no Content-Length) in keyset pages: every row once, in order, across page boundaries and equal times", async () => {
    const l = await launchWithGroups(server.url);
    // 2,500 leads of one upload share their created_at: the pages of 1,000 must follow the phone past each boundary.
    const leads = Array.from({ length: 2500 }, (_, i) => ({ phone: `55319${String(i).padStart(8, "0")}`, name: i % 7 === 0 ? "=cmd; Ana" : `N${i}` }));
    expect((await l.api("POST", LEADS(l.id), { leads })).json).toMatchObject({ created: 2500 });
    const res = await fetch(`${server.url}${LEADS(l.id, "?format=csv")}`, { headers: { "x-api-key": l.api.key } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBeNull();
    expect(res.headers.get("transfer-encoding")).toBe("chunked");
    expect(res.headers.get("content-disposition")).toMatch(/-leads\.csv"$/);
    // fetch's text() drops a BOM: decoded keeping it, as a spreadsheet reads the file.
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(await res.arrayBuffer());
    expect(text.startsWith("\uFEFFphone,name,email,source,joined,created_at\r\n")).toBe(true);
    const lines = text
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n")
      .slice(1);
    expect(lines.map((line) => line.split(",")[0])).toEqual(leads.map((x) => x.phone));
    expect(lines[0]).toMatch(/^5531900000000,"'=cmd; Ana",,,false,/);

    // The members' CSV: 2,300 joins at one time, keyed by (joined_at, id).
    const db = await getDb();
    const at = new Date();
    await db
      .insert(launchParticipants)
      .values(
        Array.from({ length: 2300 }, (_, i) => ({ launchId: l.id, groupId: l.groups[0], participant: `5521${String(i).padStart(9, "0")}`, joinedAt: at })),
      );
    const members = await fetch(`${server.url}/api/external/launch-members/${l.id}?format=csv&delimiter=semicolon`, { headers: { "x-api-key": l.api.key } });
    expect(members.headers.get("content-length")).toBeNull();
    const rows = (await members.text())
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n");
    expect(rows[0]).toBe("participant;id_group;group_name;joined_at;left_at;staff;buyer");
    const people = rows.slice(1).map((r) => r.split(";")[0]);
    expect(people).toHaveLength(2300);
    expect(new Set(people).size).toBe(2300);
    expect(people).toEqual([...people].sort());
  });

  it("answers 404 for another account's launch and for an unknown one", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const stranger = await newTenant(server.url);
    for (const path of [LEADS(l.id), LEADS(unknownLaunch)]) {
      expectEnvelope(await stranger("POST", path, { leads: [{ phone: "5511999990001" }] }), 404, "Not Found");
      expectEnvelope(await stranger("GET", `${path}?status=not_joined`), 404, "Not Found");
      expectEnvelope(await stranger("GET", `${path}?format=csv`), 404, "Not Found");
    }
    expect((await l.api("GET", LEADS(l.id))).json.total).toBe(0);
  });
});
