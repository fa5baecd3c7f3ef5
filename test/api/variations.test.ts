import { describe, expect, it } from "vitest";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant, until, type Api } from "../helpers";
import { serverWithRunner } from "../campaigns";
import { zeroPacing } from "../helpers";

// docs/decisions.md#message-variations: spintax and {{grupo}} rendered per group, chosen from the delivery key.
const rig = serverWithRunner();

/** A segment of 30 groups over two channels (15 of each), with their names. */
async function thirtyGroups(t: Api) {
  const names = new Map<string, string>();
  const channels: string[] = [];
  for (const name of ["Canal A", "Canal B"]) {
    const { json: ch } = await t("POST", "/api/external/create-channel", { name });
    channels.push(ch.id_channel);
    const listed = (await t("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups as { id_group: string; name: string }[];
    for (const g of listed.slice(0, 15)) names.set(g.id_group, g.name);
  }
  const { json: seg } = await t("POST", "/api/external/create-segment", { name: "Trinta", id_channel: channels, groups: [...names.keys()] });
  expect(seg.id_segment).toBeTruthy();
  return { segment: seg.id_segment as string, names };
}

async function finished(t: Api, id: string) {
  const info = await until(
    () => t("GET", `/api/external/info-campaign/${id}`),
    (r) => ["completed", "failed"].includes(r.json.status),
    30_000,
  );
  return info.json;
}

describe("variations", () => {
  it("30 groups get {A|B|C} {{grupo}}: every group its own name, all three variants used, the deliveries table shows the same text", async () => {
    const t = await newTenant(rig.server.url);
    expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
    const { segment, names } = await thirtyGroups(t);
    const created = await t("POST", "/api/external/create-campaign/message", { name: "Variações", id_segment: segment, message: "{A|B|C} {{grupo}}" });
    expect(created.status).toBe(201);
    const id = created.json.id_campaign as string;
    expect((await finished(t, id)).groups).toMatchObject({ total: 30, sent: 30, failed: 0 });

    const log = (await t("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { id_group: string; text: string }[];
    expect(log).toHaveLength(30);
    expect(new Set(log.map((m) => m.id_group))).toEqual(new Set(names.keys()));
    for (const m of log) expect(m.text).toMatch(new RegExp(`^[ABC] ${names.get(m.id_group)!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    expect(new Set(log.map((m) => m.text[0]))).toEqual(new Set(["A", "B", "C"]));

    const { db, provider } = await getServices();
    const caller = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: t.tenantId, userId: "user_x", role: "owner" },
      now: new Date(),
    });
    const deliveries = await caller.campaigns.deliveries({ id_campaign: id });
    const sent = new Map(log.map((m) => [m.id_group, m.text]));
    expect(deliveries).toHaveLength(30);
    for (const d of deliveries) expect(d.text).toBe(sent.get(d.id_group));
  });

  it("escaped braces and a lone | are sent as written", async () => {
    const t = await newTenant(rig.server.url);
    expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
    const { json: ch } = await t("POST", "/api/external/create-channel", { name: "Canal" });
    const groups = (await t("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.slice(0, 2).map((g: { id_group: string }) => g.id_group);
    const { json: seg } = await t("POST", "/api/external/create-segment", { name: "S", id_channel: [ch.id_channel], groups });
    const escaped = await t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: seg.id_segment, message: "Cupom \\{VIP\\} a|b" });
    expect(escaped.status).toBe(201);
    await finished(t, escaped.json.id_campaign);
    const log = (await t("GET", `/api/simulator/messages?id_campaign=${escaped.json.id_campaign}`)).json.messages as { text: string }[];
    expect(log.map((m) => m.text)).toEqual(["Cupom {VIP} a|b", "Cupom {VIP} a|b"]);
  });

  it("unbalanced braces, nesting and unknown variables are 400 naming the field (message, carousel texts)", async () => {
    const t = await newTenant(rig.server.url);
    const { json: ch } = await t("POST", "/api/external/create-channel", { name: "Canal" });
    const group = (await t("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups[0].id_group;
    const { json: seg } = await t("POST", "/api/external/create-segment", { name: "S", id_channel: [ch.id_channel], groups: [group] });
    const message = (text: string) => t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: seg.id_segment, message: text });
    expect(expectEnvelope(await message("{Olá|Oi"), 400, "Bad Request").message).toMatch(/message.*unbalanced braces/);
    expect(expectEnvelope(await message("Olá}"), 400, "Bad Request").message).toMatch(/message.*unbalanced braces/);
    expect(expectEnvelope(await message("{a|{b|c}}"), 400, "Bad Request").message).toMatch(/message.*one level/);
    expect(expectEnvelope(await message("Oi {{nome}}"), 400, "Bad Request").message).toMatch(/message.*unknown variable \{\{nome\}\}/);
    const carousel = (text: string, cardText: string) =>
      t("POST", "/api/external/create-campaign/carousel", {
        name: "x",
        id_segment: seg.id_segment,
        carousel_data: { message: text, cards: [{ image_url: "https://example.com/a.png", text: cardText }] },
      });
    expect(expectEnvelope(await carousel("ok", "{a|b"), 400, "Bad Request").message).toMatch(/carousel_data\.cards\.0\.text.*unbalanced/);
    expect(expectEnvelope(await carousel("{{hoje}}", "ok"), 400, "Bad Request").message).toMatch(/carousel_data\.message.*unknown variable/);
    expect((await carousel("{Oi|Olá} {{grupo}}", "{{data}} às {{hora}}")).status).toBe(201);
  });
});
