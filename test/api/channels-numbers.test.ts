import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { channels } from "../../db/schema";
import { simulatedOwnNumber } from "../../server/messaging/simulator";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, waitFor, type Api } from "../helpers";
import { withServerAndReceiver, withWebhookRunner } from "../webhooks/fixtures";
import { webhookHeadersOf } from "../webhooks/receiver";

// CONTRACT §7: channels readable through the API (list-channels, info-channel, edit-channel with limits), the
// number_health settings, a number's health from the platform's signals and the channel_status webhook carrying it.
const fx = withServerAndReceiver();
withWebhookRunner("100,200,300,300,300,300,300,300");

const defaultHealth = {
  state: "ok",
  reason: null,
  since: null,
  until: null,
  sent_today: 0,
  daily_cap: null,
  groups_created_today: 0,
  group_create_cap: 20,
  warmup_day: null,
};
const noLimits = { daily_message_cap: null, warmup_days: null, warmup_first_day_cap: null, min_send_gap_seconds: null, group_create_cap: null };

const channel = async (t: Api, name = "Canal") => (await t("POST", "/api/external/create-channel", { name })).json.id_channel as string;

describe("list-channels, info-channel, edit-channel", () => {
  it("answer each channel with its number, health and limits; oldest first; 404 for another tenant's channel, 400 for a malformed id", async () => {
    const t = await newTenant(fx.server.url);
    const a = await channel(t, "A");
    const b = await channel(t, "B");
    const list = await t("GET", "/api/external/list-channels");
    expect(list.status).toBe(200);
    expect(list.json.success).toBe(true);
    expect(list.json.channels.map((c: { id_channel: string }) => c.id_channel)).toEqual([a, b]);
    const first = list.json.channels[0];
    expect(first).toEqual({
      id_channel: a,
      name: "A",
      status: "connected",
      phone: simulatedOwnNumber(a),
      health: defaultHealth,
      limits: noLimits,
      created_at: expect.any(String),
    });
    expect((await t("GET", `/api/external/info-channel/${a}`)).json).toEqual({ success: true, ...first });

    const other = await newTenant(fx.server.url);
    expectEnvelope(await other("GET", `/api/external/info-channel/${a}`), 404, "Not Found");
    expectEnvelope(await t("GET", "/api/external/info-channel/channel_00000000-0000-4000-8000-000000000000"), 404, "Not Found");
    expect(expectEnvelope(await t("GET", "/api/external/info-channel/nope"), 400, "Bad Request").message).toContain("id_channel");
    expect((await other("GET", "/api/external/list-channels")).json.channels).toEqual([]);
    expectEnvelope(await other("PUT", `/api/external/edit-channel/${b}`, { name: "x", limits: { daily_message_cap: 1 } }), 404, "Not Found");
    expect((await t("GET", `/api/external/info-channel/${b}`)).json).toMatchObject({ name: "B", limits: noLimits });
  });

  it("edit-channel takes limits (only the fields sent; null goes back to the tenant's value) and answers the channel object", async () => {
    const t = await newTenant(fx.server.url);
    const a = await channel(t);
    const edited = await t("PUT", `/api/external/edit-channel/${a}`, { name: "Vendas", limits: { daily_message_cap: 5, group_create_cap: 3 } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({
      success: true,
      id_channel: a,
      name: "Vendas",
      status: "connected",
      message: expect.any(String),
      timestamp: expect.any(String),
      phone: simulatedOwnNumber(a),
      limits: { ...noLimits, daily_message_cap: 5, group_create_cap: 3 },
      health: { ...defaultHealth, daily_cap: 5, group_create_cap: 3 },
    });
    // Only the fields sent change; null is the tenant's value again.
    const again = await t("PUT", `/api/external/edit-channel/${a}`, { name: "Vendas", limits: { group_create_cap: null, min_send_gap_seconds: 2 } });
    expect(again.json.limits).toEqual({ ...noLimits, daily_message_cap: 5, min_send_gap_seconds: 2 });
    expect(again.json.health).toMatchObject({ daily_cap: 5, group_create_cap: 20 });
    // The spec's rename alone leaves the limits as they are.
    expect((await t("PUT", `/api/external/edit-channel/${a}`, { name: "Só nome" })).json.limits.daily_message_cap).toBe(5);

    const bad = async (limits: unknown, field: string) =>
      expect(expectEnvelope(await t("PUT", `/api/external/edit-channel/${a}`, { name: "x", limits }), 400, "Bad Request").message).toContain(field);
    await bad({ daily_message_cap: 0 }, "limits.daily_message_cap");
    await bad({ daily_message_cap: 100_001 }, "limits.daily_message_cap");
    await bad({ warmup_days: 61 }, "limits.warmup_days");
    await bad({ warmup_first_day_cap: 2.5 }, "limits.warmup_first_day_cap");
    await bad({ min_send_gap_seconds: 3601 }, "limits.min_send_gap_seconds");
    await bad({ group_create_cap: 201 }, "limits.group_create_cap");
    await bad({ daily_cap: 5 }, "daily_cap");
    expect((await t("GET", `/api/external/info-channel/${a}`)).json.limits.daily_message_cap).toBe(5);
  });
});

describe("number_health settings", () => {
  it("defaults, bounds (400 naming the field), updated paths; the tenant's cap and warm-up reach its channels' health", async () => {
    const t = await newTenant(fx.server.url);
    const listed = await t("GET", "/api/external/list-settings");
    expect(listed.json.settings.number_health).toEqual({
      daily_message_cap: null,
      warmup_days: 0,
      warmup_first_day_cap: 50,
      min_send_gap_seconds: 0,
      group_create_cap: 20,
    });
    const bad = async (number_health: unknown, field: string) =>
      expect(expectEnvelope(await t("PATCH", "/api/external/edit-settings", { number_health }), 400, "Bad Request").message).toContain(field);
    await bad({ daily_message_cap: 0 }, "number_health.daily_message_cap");
    await bad({ daily_message_cap: 100_001 }, "number_health.daily_message_cap");
    await bad({ daily_message_cap: "5" }, "number_health.daily_message_cap");
    await bad({ warmup_days: -1 }, "number_health.warmup_days");
    await bad({ warmup_days: 61 }, "number_health.warmup_days");
    await bad({ warmup_first_day_cap: 0 }, "number_health.warmup_first_day_cap");
    await bad({ warmup_first_day_cap: 10_001 }, "number_health.warmup_first_day_cap");
    await bad({ min_send_gap_seconds: 3601 }, "number_health.min_send_gap_seconds");
    await bad({ group_create_cap: 201 }, "number_health.group_create_cap");
    await bad({ group_create_cap: 1.5 }, "number_health.group_create_cap");
    await bad({ daily_cap: 1 }, "daily_cap");
    await bad({}, "number_health");

    const edit = await t("PATCH", "/api/external/edit-settings", { number_health: { daily_message_cap: 200, warmup_days: 3, warmup_first_day_cap: 10 } });
    expect(edit.status).toBe(200);
    expect([...edit.json.updated].sort()).toEqual(["number_health.daily_message_cap", "number_health.warmup_days", "number_health.warmup_first_day_cap"]);
    expect(edit.json.settings.number_health).toMatchObject({ daily_message_cap: 200, warmup_days: 3, warmup_first_day_cap: 10, group_create_cap: 20 });
    expect((await t("PATCH", "/api/external/edit-settings", { number_health: { daily_message_cap: 200 } })).json.updated).toEqual([]);
    expect((await t("PATCH", "/api/external/edit-settings", { number_health: { daily_message_cap: null } })).json.updated).toEqual([
      "number_health.daily_message_cap",
    ]);
    await t("PATCH", "/api/external/edit-settings", { number_health: { daily_message_cap: 200 } });

    // A channel paired now is on day 1 of its warm-up: warming, the ramp's first cap; a channel's own cap below it wins.
    const a = await channel(t);
    const info = (await t("GET", `/api/external/info-channel/${a}`)).json;
    expect(info.health).toMatchObject({ state: "warming", warmup_day: 1, daily_cap: 10, group_create_cap: 20 });
    const limited = await t("PUT", `/api/external/edit-channel/${a}`, { name: "x", limits: { warmup_first_day_cap: 300 } });
    // 300 on day 1, never above the tenant's daily_message_cap (200).
    expect(limited.json.health).toMatchObject({ state: "warming", daily_cap: 200 });
  });
});

describe("health from the platform's signals", () => {
  it("{health: banned} → banned in info-channel and a signed channel_status with health.state banned; a new pairing clears it", async () => {
    const { db } = await getServices();
    const t = await newTenant(fx.server.url);
    const path = `/health-${t.tenantId}`;
    expect((await t("PATCH", "/api/external/edit-webhooks", { channel_status_url: `${fx.receiver.url}${path}` })).status).toBe(200);
    const secret = (await t("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;
    const a = await channel(t);
    const events = () =>
      fx.receiver.received
        .filter((r) => r.path === path)
        .map((r) => new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as { type: string; data: Record<string, any> });

    expect((await t("POST", `/api/simulator/channels/${a}/state`, { health: "banned" })).status).toBe(200);
    const info = (await t("GET", `/api/external/info-channel/${a}`)).json;
    expect(info).toMatchObject({ status: "disconnected", health: { state: "banned", reason: "simulator: banned", until: null } });
    expect(info.health.since).not.toBeNull();
    const banned = await waitFor("a channel_status with health banned", () => events().find((e) => e.data.health?.state === "banned"));
    expect(banned).toMatchObject({
      type: "channel_status",
      data: { id_channel: a, status: "disconnected", previous_status: "connected", health: { state: "banned", reason: "simulator: banned", sent_today: 0 } },
    });

    // Paired again: ok, and the event says so.
    await t("POST", `/api/simulator/channels/${a}/state`, { connected: true });
    expect((await t("GET", `/api/external/info-channel/${a}`)).json).toMatchObject({ status: "connected", health: { state: "ok", reason: null } });
    const cleared = await waitFor("a channel_status back to ok", () =>
      events().find((e) => e.data.status === "connected" && e.data.previous_status === "disconnected"),
    );
    expect(cleared.data.health).toMatchObject({ state: "ok" });
    // One event per change: the pairing (connecting → connected), the ban, the new pairing.
    expect(events().map((e) => [e.data.status, e.data.health.state])).toEqual([
      ["connected", "ok"],
      ["disconnected", "banned"],
      ["connected", "ok"],
    ]);
    const [row] = await db.select().from(channels).where(eq(channels.id, a));
    expect(row.firstPairedAt).not.toBeNull();
  });

  it("a plain disconnect keeps the health; logged_out and restricted come as themselves", async () => {
    const t = await newTenant(fx.server.url);
    const a = await channel(t);
    await t("POST", `/api/simulator/channels/${a}/state`, { connected: false });
    expect((await t("GET", `/api/external/info-channel/${a}`)).json).toMatchObject({ status: "disconnected", health: { state: "ok" } });
    await t("POST", `/api/simulator/channels/${a}/state`, { health: "logged_out" });
    expect((await t("GET", `/api/external/info-channel/${a}`)).json.health.state).toBe("logged_out");
    await t("POST", `/api/simulator/channels/${a}/state`, { health: "restricted" });
    expect((await t("GET", `/api/external/info-channel/${a}`)).json.health.state).toBe("restricted");
  });
});
