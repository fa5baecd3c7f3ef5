/**
 * One phone codec (server/phones/phone.ts; docs/launches.md#one-phone-codec) and participant events in the
 * platform's order (docs/launches.md#the-order-of-joins-and-leaves), through the whole service against the fake
 * Evolution API 2.3.7: a Belo Horizonte mobile (DDD 31) typed with its ninth digit arrives from the gateway
 * without it (Evolution's formatBRNumber), as a number or beside its LID.
 */
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchGroups, tenants } from "../../db/schema";
import { createIntegration } from "../../server/integrations/create-integration";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import type { TestServer } from "../http-server";
import { type Api, request } from "../helpers";
import { evolutionLaunch as launchWithEvolution, groupRows } from "./fixtures";

let fake: FakeEvolution;
let server: TestServer;

beforeAll(async () => {
  ({ fake, server } = await startEvolutionService());
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

const evolutionLaunch = (opts: Parameters<typeof launchWithEvolution>[2] = {}) => launchWithEvolution(server.url, fake, { groups: 1, ...opts });

type Row = { participant: string; id_group: string; left_at: string | null; staff: boolean };
const members = async (l: { api: Api; id: string }) => (await l.api("GET", `/api/external/launch-members/${l.id}`)).json.members as Row[];
const totals = async (l: { api: Api; id: string }) => (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals;
const participantPosts = (groupId: string) =>
  fake.webhookDeliveries.filter((d) => {
    const b = d.body as { event?: string; data?: { id?: string } };
    return b.event === "group-participants.update" && b.data?.id === groupId;
  });

describe("the ninth digit: typed with it, reported without it (DDD ≥ 31)", () => {
  it("the fake gateway reports the channel's own number and a DDD 31 mobile as Evolution does: without the 9", async () => {
    const l = await evolutionLaunch();
    const own = fake.instances.get(l.channel)!.owner;
    expect(own).toMatch(/^5531[7-9]\d{7}$/);
    await fake.groupJoin(l.channel, l.groups[0], ["5531987650001"]);
    const post = participantPosts(l.groups[0]).at(-1)!.body as { data: { participants: { id: string }[] } };
    expect(post.data.participants.map((p) => p.id)).toEqual(["553187650001@s.whatsapp.net"]);
  });

  it("staff and a template admin typed `+55 31 9xxxx-xxxx` are staff when they join as 55 31 xxxxxxxx, or by a LID paired with it: not leads", async () => {
    // As the API takes them (digits with the country code), with the ninth digit.
    const staff = "5531987650011";
    const admin = "5531987650012";
    const l = await evolutionLaunch({ staff: [staff], admins: [admin] });
    const [g1] = l.groups;
    // Staff by number (the gateway drops the 9); the admin by LID, the event carrying the number beside it.
    await fake.groupJoin(l.channel, g1, ["5531987650011"]);
    await fake.groupJoin(l.channel, g1, ["204000000000012@lid"], { resolveLids: { "204000000000012@lid": "5531987650012" } });
    // A lead for comparison: someone else from Belo Horizonte.
    await fake.groupJoin(l.channel, g1, ["5531987650013"]);
    const rows = await members(l);
    expect(rows.map((r) => [r.participant, r.staff])).toEqual([
      ["553187650011", true],
      ["553187650012", true],
      ["553187650013", false],
    ]);
    expect(await totals(l)).toMatchObject({ unique_members: 1, joins: 1 });
  });

  it("a lead uploaded with the 9 who joins without it has joined; a buyer's checkout phone with the 9 is that member", async () => {
    const l = await evolutionLaunch();
    const [g1] = l.groups;
    const up = await l.api("POST", `/api/external/launch-leads/${l.id}`, { leads: [{ phone: "(31) 98765-0021", name: "Ana" }, { phone: "31 98765-0022" }] });
    expect(up.status).toBe(200);
    await fake.groupJoin(l.channel, g1, ["5531987650021"]);
    expect(await totals(l)).toMatchObject({ leads: 2, leads_joined: 1 });
    const notJoined = (await l.api("GET", `/api/external/launch-leads/${l.id}?status=not_joined`)).json.leads as { phone: string }[];
    expect(notJoined.map((r) => r.phone)).toEqual(["5531987650022"]);

    // A Hotmart purchase whose checkout phone has the 9: the buyer is the member reported without it.
    const db = await getDb();
    await createIntegration(
      db,
      l.api.tenantId,
      { type: "hotmart", credentials: { client_id: "cid", client_secret: "cs", basic_token: "Basic x", hottok: "hottok-bh" } },
      new Date(),
    );
    const [t] = await db.select({ token: tenants.hooksToken }).from(tenants).where(eq(tenants.id, l.api.tenantId));
    const now = Date.now();
    const body = {
      id: "evt-bh-1",
      creation_date: now,
      event: "PURCHASE_APPROVED",
      version: "2.0.0",
      data: {
        product: { id: 1, ucode: "u", name: "Curso" },
        buyer: { email: "ana@example.com", name: "Ana", checkout_phone: "(31) 98765-0021" },
        purchase: { transaction: "HP-BH-1", status: "APPROVED", approved_date: now, order_date: now, price: { value: 97, currency_value: "BRL" } },
      },
    };
    const res = await request(server.url, "POST", `/api/hooks/hotmart/${t.token}`, JSON.stringify(body), {
      "content-type": "application/json",
      "x-hotmart-hottok": "hottok-bh",
    });
    expect(res.json).toMatchObject({ recorded: true, launches: 1 });
    const member = ((await l.api("GET", `/api/external/launch-members/${l.id}`)).json.members as (Row & { buyer: boolean })[])[0];
    expect(member).toMatchObject({ participant: "553187650021", buyer: true });
  });
});

describe("participant events in the platform's order", () => {
  it("a join answered 503 and sent again after the person's later leave is applied before it: the person is out (members and launch-members agree)", async () => {
    const l = await evolutionLaunch();
    const [g1] = l.groups;
    const db = await getDb();
    // members as the platform counts the group now (a leave never takes it below 0).
    const start = fake.group(l.channel, g1)!.participants!.length;
    await db
      .update(launchGroups)
      .set({ members: start })
      .where(and(eq(launchGroups.launchId, l.id), eq(launchGroups.groupId, g1)));
    const person = "5531987650031";
    // The first resend well after the leave, even on a slow machine.
    fake.knobs.webhookRetryDelaysMs = [1500, 300, 300, 300, 300, 300, 300, 300, 300];
    await db.execute(sql`create or replace function refuse_participant_h2() returns trigger language plpgsql as $$
      begin raise exception 'no space left on device (test)'; end $$`);
    await db.execute(sql`create trigger refuse_participant_h2 before insert on launch_participants for each row execute function refuse_participant_h2()`);
    try {
      await fake.groupJoin(l.channel, g1, [person]);
      expect(participantPosts(g1).map((d) => d.status)).toEqual([503]);
      // The person leaves at once: recorded (a leave of someone not seen yet), while the gateway still holds the join.
      await fake.groupLeave(l.channel, g1, [person]);
      expect(participantPosts(g1).at(-1)!.status).toBe(200);
    } finally {
      await db.execute(sql`drop trigger if exists refuse_participant_h2 on launch_participants`);
    }
    // The join comes again, after the leave, with the body it had (its `date_time` older than the leave's).
    await fake.webhooksSettled();
    const statuses = participantPosts(g1).map((d) => d.status);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);

    const rows = await members(l);
    expect(rows.map((r) => [r.participant, r.left_at !== null])).toEqual([["553187650031", true]]);
    expect(await totals(l)).toMatchObject({ joins: 1, leaves: 1 });
    expect((await groupRows(l.id))[0].members).toBe(start);
    // The platform agrees: the person is not in the group.
    expect(fake.group(l.channel, g1)!.participants!.some((p) => p.id === "553187650031@s.whatsapp.net")).toBe(false);
  });
});
