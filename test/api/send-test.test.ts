import { describe, expect, it } from "vitest";
import { apiFor, expectEnvelope, newTenant, until, type Api, type ApiResponse } from "../helpers";
import { serverWithRunner } from "../campaigns";
import { zeroPacing } from "../helpers";
import { authorizeApp, registerApp, signedInUser } from "../oauth-client";

// docs/decisions.md#test-send: "Enviar teste" sends to the settings' test groups only, and no statistic moves.
const rig = serverWithRunner((server) => {
  process.env.APP_URL = server.url;
  process.env.NEXTAUTH_URL = server.url;
});

async function channelWithGroups(t: Api) {
  const { json: ch } = await t("POST", "/api/external/create-channel", { name: "Canal" });
  const groups = (await t("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups as { id_group: string; name: string }[];
  return { channel: ch.id_channel as string, groups };
}

const simulatorLog = async (t: Api, channel: string) =>
  (await t("GET", `/api/simulator/messages?id_channel=${channel}`)).json.messages as { id_group: string; id_campaign: string | null; text: string }[];

describe("send-test", () => {
  it("reaches only the test groups, each with its own name and a different variant, and moves no statistic", async () => {
    const user = await signedInUser(rig.server.url);
    const t = apiFor(rig.server.url, user.tenantId, user.apiKey);
    expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
    const { channel, groups } = await channelWithGroups(t);
    const { json: seg } = await t("POST", "/api/external/create-segment", {
      name: "Seg",
      id_channel: [channel],
      groups: groups.slice(0, 4).map((g) => g.id_group),
    });
    // A finished campaign, so the statistics hold something to compare.
    const { json: created } = await t("POST", "/api/external/create-campaign/message", { name: "Base", id_segment: seg.id_segment, message: "Olá" });
    await until(
      () => t("GET", `/api/external/info-campaign/${created.id_campaign}`),
      (r) => r.json.status === "completed",
      20_000,
    );

    const testGroups = [groups[10], groups[11]];
    const edited = await t("PATCH", "/api/external/edit-settings", { test_groups: testGroups.map((g) => ({ id_channel: channel, id_group: g.id_group })) });
    expect(edited.status).toBe(200);
    expect(edited.json.updated).toEqual(["test_groups"]);
    expect((await t("GET", "/api/external/list-settings")).json.settings.test_groups).toEqual(
      testGroups.map((g) => ({ id_channel: channel, id_group: g.id_group })),
    );

    const { app, client_secret } = await registerApp((await newTenant(rig.server.url)).tenantId);
    const tokens = await authorizeApp(
      rig.server.url,
      user,
      { client_id: app.client_id, client_secret: client_secret!, redirect_uri: "http://127.0.0.1:8765/callback" },
      "statistics:read campaigns:read",
    );
    const bearer = (path: string) => fetch(rig.server.url + path, { headers: { authorization: `Bearer ${tokens.access_token}` } }).then((r) => r.json());
    const figures = async () => ({
      info: (await t("GET", `/api/external/info-campaign/${created.id_campaign}`)).json,
      statistics: await bearer("/api/external/partner/statistics"),
      campaigns: await bearer("/api/external/partner/campaigns"),
      log: (await simulatorLog(t, channel)).length,
    });
    // The base campaign's reads come a moment after its sends (the simulator reads a share 100 ms later, then the
    // receipts are recorded): the figures are taken once two looks half a second apart agree.
    let before = await figures();
    for (let settled = false; !settled; ) {
      await new Promise((r) => setTimeout(r, 500));
      const again = await figures();
      settled = JSON.stringify(again) === JSON.stringify(before);
      before = again;
    }
    expect(before.statistics.success).toBe(true);
    expect(before.log).toBe(4);

    const res = await t("POST", "/api/external/send-test", { name: "Teste", message: "{A|B} {{grupo}}", scheduled_at: "01/01/2030 - 10:00" });
    expect(res.status).toBe(200);
    expect(res.json.results).toEqual([
      { id_group: testGroups[0].id_group, id_channel: channel, status: "sent", text: `A ${testGroups[0].name}` },
      { id_group: testGroups[1].id_group, id_channel: channel, status: "sent", text: `B ${testGroups[1].name}` },
    ]);

    const log = await simulatorLog(t, channel);
    const tests = log.filter((m) => m.id_campaign === null);
    expect(tests.map((m) => [m.id_group, m.text]).sort()).toEqual(testGroups.map((g, i) => [g.id_group, `${i ? "B" : "A"} ${g.name}`]).sort());
    expect(log.length).toBe(6);

    // Receipts of the test messages arrive (the simulator reads a share of them) and count nowhere.
    await new Promise((r) => setTimeout(r, 500));
    const after = await figures();
    expect(after.info).toEqual(before.info);
    expect(after.statistics).toEqual(before.statistics);
    expect(after.campaigns).toEqual(before.campaigns);

    // With id_segment: the texts of the segment's first groups (their names), one variant after another.
    const preview = await t("POST", "/api/external/send-test", { id_segment: seg.id_segment, message: "{A|B} {{grupo}}" });
    expect(preview.status).toBe(200);
    expect(preview.json.results.map((r: { text: string; preview_of: string }) => [r.text, r.preview_of])).toEqual([
      [`A ${groups[0].name}`, groups[0].id_group],
      [`B ${groups[1].name}`, groups[1].id_group],
    ]);
  });

  it("a carousel goes too; a failing group is reported, the others still get theirs", async () => {
    const t = await newTenant(rig.server.url);
    const { channel, groups } = await channelWithGroups(t);
    await t("PATCH", "/api/external/edit-settings", { test_groups: [groups[0], groups[1]].map((g) => ({ id_channel: channel, id_group: g.id_group })) });
    await t("POST", `/api/simulator/groups/${encodeURIComponent(groups[1].id_group)}/failures`, { always: true });
    const res = await t("POST", "/api/external/send-test", {
      carousel_data: { message: "{Oi|Olá}", cards: [{ image_url: "https://example.com/a.png", text: "Card {{grupo}}", buttons: [] }] },
    });
    expect(res.status).toBe(200);
    expect(res.json.results[0]).toEqual({ id_group: groups[0].id_group, id_channel: channel, status: "sent", text: `Oi\nCard ${groups[0].name}` });
    expect(res.json.results[1]).toMatchObject({ id_group: groups[1].id_group, status: "failed", error: expect.any(String) });
  });

  it("test_groups: another tenant's channel is 404, a group the channel does not reach 400, more than 5 is 400, each naming the field", async () => {
    const t = await newTenant(rig.server.url);
    const other = await newTenant(rig.server.url);
    const mine = await channelWithGroups(t);
    const theirs = await channelWithGroups(other);
    const edit = (test_groups: unknown) => t("PATCH", "/api/external/edit-settings", { test_groups });
    expect(expectEnvelope(await edit([{ id_channel: theirs.channel, id_group: theirs.groups[0].id_group }]), 404, "Not Found").message).toMatch(
      /^test_groups\.0\.id_channel/,
    );
    expect(
      expectEnvelope(
        await edit([
          { id_channel: mine.channel, id_group: mine.groups[0].id_group },
          { id_channel: mine.channel, id_group: theirs.groups[0].id_group },
        ]),
        400,
        "Bad Request",
      ).message,
    ).toMatch(/^test_groups\.1\.id_group: .*not reached/);
    const six = mine.groups.slice(0, 6).map((g) => ({ id_channel: mine.channel, id_group: g.id_group }));
    expect(expectEnvelope(await edit(six), 400, "Bad Request").message).toMatch(/test_groups.*at most 5/);
    expect(expectEnvelope(await edit([{ id_channel: mine.channel }]), 400, "Bad Request").message).toMatch(/test_groups\.0\.id_group/);
    expect((await t("GET", "/api/external/list-settings")).json.settings.test_groups).toEqual([]);
  });

  it("400 without test groups, for a bad body (naming the field) and another tenant's segment 404", async () => {
    const t = await newTenant(rig.server.url);
    const other = await newTenant(rig.server.url);
    expect(expectEnvelope(await t("POST", "/api/external/send-test", { message: "Oi" }), 400, "Bad Request").code).toBe("no_test_groups");
    const { channel, groups } = await channelWithGroups(t);
    await t("PATCH", "/api/external/edit-settings", { test_groups: [{ id_channel: channel, id_group: groups[0].id_group }] });
    expect(expectEnvelope(await t("POST", "/api/external/send-test", { message: "{Oi|Olá" }), 400, "Bad Request").message).toMatch(/message.*unbalanced/);
    expect(expectEnvelope(await t("POST", "/api/external/send-test", { message: "Oi {{nome}}" }), 400, "Bad Request").message).toMatch(
      /message.*unknown variable/,
    );
    expect(expectEnvelope(await t("POST", "/api/external/send-test", { message: "" }), 400, "Bad Request").message).toMatch(/message/);
    const carouselAndMessage = { message: "x", carousel_data: { cards: [{ image_url: "https://example.com/a.png", text: "c" }] } };
    expect(expectEnvelope(await t("POST", "/api/external/send-test", carouselAndMessage), 400, "Bad Request").message).toMatch(/message.*carousel/);
    const theirs = await channelWithGroups(other);
    const { json: seg } = await other("POST", "/api/external/create-segment", { name: "S", id_channel: [theirs.channel], groups: [theirs.groups[0].id_group] });
    expectEnvelope(await t("POST", "/api/external/send-test", { message: "Oi", id_segment: seg.id_segment }), 404, "Not Found");
  });

  it("at most 10 per 10 minutes per tenant: the 11th is 429 in the envelope with Retry-After; another tenant is not held back", async () => {
    const t = await newTenant(rig.server.url);
    const { channel, groups } = await channelWithGroups(t);
    await t("PATCH", "/api/external/edit-settings", { test_groups: [{ id_channel: channel, id_group: groups[0].id_group }] });
    const statuses: number[] = [];
    let last: ApiResponse | undefined;
    for (let i = 0; i < 11; i++) {
      last = await t("POST", "/api/external/send-test", { message: `Teste ${i}` });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect(expectEnvelope(last!, 429, "Too Many Requests").code).toBe("rate_limited");
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await simulatorLog(t, channel)).length).toBe(10);

    const u = await newTenant(rig.server.url);
    const theirs = await channelWithGroups(u);
    await u("PATCH", "/api/external/edit-settings", { test_groups: [{ id_channel: theirs.channel, id_group: theirs.groups[0].id_group }] });
    expect((await u("POST", "/api/external/send-test", { message: "Oi" })).status).toBe(200);
  });
});
