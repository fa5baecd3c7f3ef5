import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { simulatedOwnNumber, type SimulatorProvider } from "../../server/messaging/simulator";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, until, type Api, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// docs/decisions.md#limits-abuse-retention, "Simulator": its state is per tenant; latency and failure injection touch only the
// caller's own channels and groups.
let server: TestServer;
let runner: InProcessRunner;

beforeAll(async () => {
  server = await startTestServer();
  runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
});
afterAll(async () => {
  await runner.stop();
  await server.close();
});

async function tenant() {
  const t = await newTenant(server.url);
  expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
  return t;
}

async function segmentWithGroups(t: Api, count: number) {
  const { json: ch } = await t("POST", "/api/external/create-channel", { name: "Canal" });
  const groups = (await t("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.map((g: { id_group: string }) => g.id_group) as string[];
  const { json: seg } = await t("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups: groups.slice(0, count) });
  return { channel: ch.id_channel as string, segment: seg.id_segment as string, groups };
}

/** Creates a campaign and waits for it to finish; returns its info and how long that took. */
async function runCampaign(t: Api, segment: string, ms = 20_000) {
  const started = Date.now();
  const { json } = await t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: segment, message: "Olá" });
  const info = await until(
    () => t("GET", `/api/external/info-campaign/${json.id_campaign}`),
    (r) => ["completed", "failed"].includes(r.json.status),
    ms,
  );
  return { info: info.json, elapsedMs: Date.now() - started };
}

const failures = (t: Api, group: string, body: unknown) => t("POST", `/api/simulator/groups/${encodeURIComponent(group)}/failures`, body);

describe("simulator latency is per tenant", () => {
  it("one tenant's 2,000 ms latency does not slow another tenant's campaign, and slows its own", async () => {
    const slow = await tenant();
    const fast = await tenant();
    const slowSeg = await segmentWithGroups(slow, 1);
    const fastSeg = await segmentWithGroups(fast, 5);
    expect((await slow("POST", "/api/simulator/latency", { ms: 2000 })).json).toEqual({ success: true, ms: 2000 });
    try {
      // Five sends at 2 s each would take 10 s if the latency were everyone's.
      const other = await runCampaign(fast, fastSeg.segment);
      expect(other.info).toMatchObject({ status: "completed", groups: { total: 5, sent: 5, failed: 0 } });
      expect(other.elapsedMs).toBeLessThan(1900);
      const own = await runCampaign(slow, slowSeg.segment);
      expect(own.info).toMatchObject({ status: "completed", groups: { total: 1, sent: 1 } });
      expect(own.elapsedMs).toBeGreaterThanOrEqual(2000);
    } finally {
      await slow("POST", "/api/simulator/latency", { ms: 0 });
    }
  });
});

describe("simulator failure injection is per tenant", () => {
  it("404 in the envelope for another tenant's group or an unknown group; 404 for another tenant's channel state", async () => {
    const mine = await tenant();
    const theirs = await tenant();
    const their = await segmentWithGroups(theirs, 1);
    await segmentWithGroups(mine, 1);
    expectEnvelope(await failures(mine, their.groups[0], { always: true }), 404, "Not Found");
    expectEnvelope(await failures(mine, "120363000000000000001@g.us", { fail_next: 1 }), 404, "Not Found");
    expectEnvelope(await mine("POST", `/api/simulator/channels/${their.channel}/state`, { connected: false }), 404, "Not Found");
    // Their channel is untouched.
    const listed = await theirs("GET", `/api/external/list-groups/${their.channel}`);
    expect(listed.status).toBe(200);
  });

  it("another tenant cannot make my sends fail; my own injection fails only my group", async () => {
    process.env.SEND_RETRY_SCHEDULE = "10,10";
    const me = await tenant();
    const attacker = await tenant();
    await segmentWithGroups(attacker, 1);
    const s = await segmentWithGroups(me, 3);
    expectEnvelope(await failures(attacker, s.groups[0], { always: true }), 404, "Not Found");
    const untouched = await runCampaign(me, s.segment);
    expect(untouched.info.groups).toEqual({ total: 3, sent: 3, pending: 0, failed: 0 });

    expect((await failures(me, s.groups[1], { always: true })).json).toEqual({ success: true, id_group: s.groups[1], always: true });
    const injected = await runCampaign(me, s.segment);
    expect(injected.info.groups).toEqual({ total: 3, sent: 2, pending: 0, failed: 1 });
    expect((await failures(me, s.groups[1], { always: false })).status).toBe(200);
  });

  it("the provider keys an injected failure by channel and group", async () => {
    const provider = (await getServices()).provider as SimulatorProvider;
    const a = await segmentWithGroups(await tenant(), 1);
    const b = await segmentWithGroups(await tenant(), 1);
    const group = a.groups[0];
    await provider.setFailures(a.channel, group, { failNext: 1 });
    const message = (channelId: string) => ({
      channelId,
      groupId: group,
      deliveryKey: `campaign_${randomUUID()}:${group}`,
      content: { type: "text" as const, text: "x" },
      linkPreview: false as const,
      mentionAll: false,
    });
    // Same group id through another channel whose number is in it too: not the injected failure.
    await provider.joinParticipants(a.channel, group, [simulatedOwnNumber(b.channel)]);
    const [other] = await provider.sendMany([message(b.channel)]);
    expect(other.ok).toBe(true);
    const [first, second] = [(await provider.sendMany([message(a.channel)]))[0], (await provider.sendMany([message(a.channel)]))[0]];
    expect(first.ok).toBe(false);
    expect(second.ok).toBe(true);
  });
});
