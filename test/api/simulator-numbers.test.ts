import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { channels } from "../../db/schema";
import { ProviderSendError, type OutboundMessage } from "../../server/messaging/provider";
import { simulatedOwnNumber, type SimulatorProvider } from "../../server/messaging/simulator";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, until, type Api, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// CONTRACT §7 "Simulator" (docs/simulator.md#several-numbers-and-number-health): a channel joining another's group
// by its number, promoted and leaving; the platform taking a number off with a reason; its rate limit; the log's id_channel.
let server: TestServer;
let provider: SimulatorProvider;
let runner: InProcessRunner;

beforeAll(async () => {
  server = await startTestServer();
  provider = (await getServices()).provider as SimulatorProvider;
  runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
});
afterAll(async () => {
  await runner.stop();
  await server.close();
});

async function twoChannels() {
  const t = await newTenant(server.url);
  expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
  const a = (await t("POST", "/api/external/create-channel", { name: "A" })).json.id_channel as string;
  const b = (await t("POST", "/api/external/create-channel", { name: "B" })).json.id_channel as string;
  return { t, a, b };
}

const groupsOf = async (t: Api, channel: string) =>
  ((await t("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[]).map((g) => g.id_group);
const participants = (t: Api, group: string, body: unknown) => t("POST", `/api/simulator/groups/${encodeURIComponent(group)}/participants`, body);
const state = (t: Api, channel: string, body: unknown) => t("POST", `/api/simulator/channels/${channel}/state`, body);
const message = (channelId: string, groupId: string): OutboundMessage => ({
  channelId,
  groupId,
  deliveryKey: `campaign_${randomUUID()}:${groupId}`,
  content: { type: "text", text: "x" },
  linkPreview: false,
  mentionAll: false,
});

describe("a channel joins another channel's group by its number", () => {
  it("join → listed and reached (a campaign through it, id_channel in the log); promote in an admins-only group; leave → gone and refused", async () => {
    const { t, a, b } = await twoChannels();
    const [g] = await groupsOf(t, a);
    const bNumber = simulatedOwnNumber(b);
    expect(await groupsOf(t, b)).not.toContain(g);
    // Not in the group: WhatsApp refuses the send (permanent), nothing is logged.
    const [refused] = await provider.sendMany([message(b, g)]);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toMatchObject({ name: "ProviderSendError", transient: false });

    const joined = await participants(t, g, { join: [bNumber] });
    expect(joined.json).toMatchObject({ success: true, id_group: g, joined: [bNumber], members: 2 });
    expect(await groupsOf(t, b)).toContain(g);
    expect(await provider.groupState(b, g)).toEqual({ exists: true, admin: false, size: 2 });

    // The group is b's to send to now: a segment on b alone, a campaign, the log says which channel sent it.
    const seg = await t("POST", "/api/external/create-segment", { name: "Por B", id_channel: [b], groups: [g] });
    expect(seg.status).toBe(201);
    const { json: campaign } = await t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: seg.json.id_segment, message: "Olá" });
    await until(
      () => t("GET", `/api/external/info-campaign/${campaign.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    const log = (await t("GET", `/api/simulator/messages?id_campaign=${campaign.id_campaign}`)).json.messages;
    expect(log.map((m: { id_channel: string; id_group: string }) => [m.id_channel, m.id_group])).toEqual([[b, g]]);
    expect((await t("GET", `/api/simulator/messages?id_channel=${a}&id_campaign=${campaign.id_campaign}`)).json.messages).toEqual([]);

    // A group made admins-only: a member that is not an admin cannot post; promoted, it can.
    const made = await provider.createGroup(a, { name: "Avisos", adminsOnly: true, admins: [] });
    expect((await participants(t, made.id_group, { join: [bNumber] })).status).toBe(200);
    const [notAdmin] = await provider.sendMany([message(b, made.id_group)]);
    expect(notAdmin.ok).toBe(false);
    const promoted = await participants(t, made.id_group, { promote: [bNumber, "5511900000000"] });
    expect(promoted.json).toMatchObject({ success: true, promoted: [bNumber], members: 2 });
    expect(await provider.groupState(b, made.id_group)).toMatchObject({ exists: true, admin: true });
    expect((await provider.sendMany([message(b, made.id_group)]))[0].ok).toBe(true);
    // b (an admin now) reads the invite link; b's number is not taken by "the N most recent leave".
    expect(await provider.inviteUrl(b, made.id_group)).toMatch(/^https:\/\/chat\.whatsapp\.com\//);
    await participants(t, g, { join: 2 });
    expect((await participants(t, g, { leave: 10 })).json.left).not.toContain(bNumber);

    const left = await participants(t, g, { leave: [bNumber] });
    expect(left.json).toMatchObject({ left: [bNumber], members: 1 });
    expect(await groupsOf(t, b)).not.toContain(g);
    expect((await provider.sendMany([message(b, g)]))[0].ok).toBe(false);
    expect((await provider.sendMany([message(a, g)]))[0].ok).toBe(true);
    expectEnvelope(await participants(t, g, { promote: [] }), 400, "Bad Request");
  });
});

describe("POST /api/simulator/channels/{id}/state", () => {
  it("{health: banned} disconnects with the reason: the channel's health is banned; {connected: true} (paired again) clears it", async () => {
    const { db } = await getServices();
    const { t, a } = await twoChannels();
    const res = await state(t, a, { health: "banned" });
    expect(res.json).toEqual({
      success: true,
      id_channel: a,
      connected: false,
      health: "banned",
      rate_limit_per_minute: null,
      group_create_rate_limit_per_hour: null,
    });
    const [row] = await db.select().from(channels).where(eq(channels.id, a));
    expect(row).toMatchObject({ status: "disconnected", healthState: "banned", healthReason: "simulator: banned" });
    expect((await t("GET", `/api/external/list-groups/${a}`)).status).toBe(503);
    expect((await provider.sendMany([message(a, (await provider.groupsOf(a))[0].id_group)]))[0]).toMatchObject({ ok: false });

    expect((await state(t, a, { connected: true })).json).toMatchObject({ connected: true, health: null });
    const [back] = await db.select().from(channels).where(eq(channels.id, a));
    expect(back).toMatchObject({ status: "connected", healthState: "ok", healthReason: null, phone: simulatedOwnNumber(a) });

    // logged_out and restricted the same way; a reason with connected: true is a contradiction.
    await state(t, a, { health: "logged_out" });
    expect((await db.select().from(channels).where(eq(channels.id, a)))[0].healthState).toBe("logged_out");
    expectEnvelope(await state(t, a, { health: "restricted", connected: true }), 400, "Bad Request");
    expectEnvelope(await state(t, a, { health: "suspended" }), 400, "Bad Request");
    expectEnvelope(await state(t, a, {}), 400, "Bad Request");
  });

  it("{rate_limit_per_minute: N}: sends past N in a rolling minute are refused as rate-limited (transient); null clears it", async () => {
    const { t, a } = await twoChannels();
    const groups = await groupsOf(t, a);
    expect((await state(t, a, { rate_limit_per_minute: 3 })).json).toMatchObject({ connected: true, rate_limit_per_minute: 3 });
    const first = await provider.sendMany(groups.slice(0, 2).map((g) => message(a, g)));
    expect(first.map((o) => o.ok)).toEqual([true, true]);
    const second = await provider.sendMany(groups.slice(2, 5).map((g) => message(a, g)));
    expect(second.map((o) => o.ok)).toEqual([true, false, false]);
    const refused = second[1];
    expect(!refused.ok && refused.error).toBeInstanceOf(ProviderSendError);
    expect(!refused.ok && refused.error).toMatchObject({ transient: true, rateLimited: true });
    // Two senders at once cannot pass it either.
    const both = await Promise.all([provider.sendMany([message(a, groups[5])]), provider.sendMany([message(a, groups[6])])]);
    expect(both.flat().filter((o) => o.ok)).toHaveLength(0);
    expect((await t("GET", `/api/simulator/messages?id_channel=${a}`)).json.messages).toHaveLength(3);

    expect((await state(t, a, { rate_limit_per_minute: null })).json).toMatchObject({ rate_limit_per_minute: null });
    expect((await provider.sendMany(groups.slice(7, 12).map((g) => message(a, g)))).every((o) => o.ok)).toBe(true);
    expectEnvelope(await state(t, a, { rate_limit_per_minute: 0 }), 400, "Bad Request");
  });
});
