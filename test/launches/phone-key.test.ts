/**
 * The comparison key drops a 9 only before a mobile's subscriber number (server/phones/phone.ts `phoneKey`): a
 * 13-digit 55 + DDD + 9 + [2-5]xxxxxxx is not the landline 55 + DDD + [2-5]xxxxxxx. Through the API (a lead is joined
 * only by its own number), and the migration that recomputed the keys stored with the old rule (both databases).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchLeads, purchases } from "../../db/schema";
import { phoneKey } from "../../server/phones/phone";
import { startTestServer, type TestServer } from "../http-server";
import { launchWithGroups } from "./fixtures";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** The key as it was computed before: the 9 after any DDD dropped, whatever followed. */
const oldKey = (phone: string) => phone.replace(/^55(\d{2})9(\d{8})$/, "55$1$2");

// Found by its name, not its number (numbers are renumbered when branches merge).
const migrations = path.join(__dirname, "../../db/migrations");
const migration = readFileSync(path.join(migrations, readdirSync(migrations).find((f) => f.endsWith("_h1_phone_key_subscriber.sql")) ?? ""), "utf8");

describe("phoneKey and the ninth digit", () => {
  it("a landline joining does not mark the 13-digit 55 31 9 3xxx-xxxx lead as joined; keys stored by the old rule are recomputed by the migration", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const leads = [
      { phone: "5531932345678", name: "Nove antes de fixo" },
      { phone: "553132345678", name: "Fixo" },
      { phone: "5531987654321", name: "Celular" },
    ];
    expect((await l.api("POST", `/api/external/launch-leads/${l.id}`, { leads })).status).toBe(200);
    // The landline and the mobile (reported without its 9) join.
    const joined = await l.api("POST", `/api/simulator/groups/${encodeURIComponent(l.groups[0])}/participants`, { join: ["553132345678", "553187654321"] });
    expect(joined.status).toBe(200);
    const notJoined = async () =>
      ((await l.api("GET", `/api/external/launch-leads/${l.id}?status=not_joined`)).json.leads as { phone: string }[]).map((r) => r.phone);
    expect(await notJoined()).toEqual(["5531932345678"]);
    expect((await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals).toMatchObject({ leads: 3, leads_joined: 2 });

    // Rows written with the old rule (the lead's and a purchase's key without the 9): the migration recomputes them.
    const db = await getDb();
    for (const lead of leads)
      await db
        .update(launchLeads)
        .set({ matchKey: oldKey(lead.phone) })
        .where(eq(launchLeads.phone, lead.phone));
    const [purchase] = await db
      .insert(purchases)
      .values({
        tenantId: l.api.tenantId,
        platform: "hotmart",
        transaction: `HP-${l.id}`,
        status: "approved",
        phone: "5531932345678",
        matchKey: oldKey("5531932345678"),
        occurredAt: new Date(),
        receivedAt: new Date(),
      })
      .returning({ id: purchases.id });
    expect(await notJoined()).toEqual([]);
    for (const statement of migration.split("--> statement-breakpoint")) await db.execute(sql.raw(statement));
    expect(await notJoined()).toEqual(["5531932345678"]);
    const stored = await db.select({ phone: launchLeads.phone, key: launchLeads.matchKey }).from(launchLeads).where(eq(launchLeads.launchId, l.id));
    for (const r of stored) expect(r.key).toBe(phoneKey(r.phone));
    const [p] = await db.select({ key: purchases.matchKey }).from(purchases).where(eq(purchases.id, purchase.id));
    expect(p.key).toBe("5531932345678");
  });

  it("on the simulator (numbers as the platform writes them): staff typed `+55 31 9 8765-0011` join as 553187650011 and are staff, not leads", async () => {
    const l = await launchWithGroups(server.url, { groups: 1, staff: ["+55 31 98765-0011"], admins: ["5541987650012"] });
    const join = await l.api("POST", `/api/simulator/groups/${encodeURIComponent(l.groups[0])}/participants`, {
      join: ["5531987650011", "5541987650012", "5531987650013"],
    });
    expect(join.json.joined).toEqual(["553187650011", "554187650012", "553187650013"]);
    const members = (await l.api("GET", `/api/external/launch-members/${l.id}`)).json.members as { participant: string; staff: boolean }[];
    expect(members.map((m) => [m.participant, m.staff])).toEqual([
      ["553187650011", true],
      ["554187650012", true],
      ["553187650013", false],
    ]);
    expect((await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals).toMatchObject({ unique_members: 1 });
  });
});
