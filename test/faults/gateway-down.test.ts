import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { campaigns, outboxEvents } from "../../db/schema";
import { startJob, type Started as JobEngine } from "../../inngest/start";
import { channelStatePollJob } from "../../inngest/jobs/channel-state-poll";
import type { FakeEvolution } from "../fake-evolution";
import { until, waitFor, type Api } from "../helpers";
import { startEvolutionWithRunner } from "../evolution-service";

// Fault: the Evolution gateway goes down mid-campaign (the fake stops listening: connections refused)
// and comes back on the same port with its state ~5 s later ("2 minutes" in production terms). The
// channel must go offline, the campaign pause as `channel_offline`, resume when the state poll
// (EVOLUTION_STATE_POLL_SECONDS=1 here) reads the instance `open` again, and every group get exactly one message.
const groupCount = 60;
const outageMs = 5000;

let fake: FakeEvolution;
let poll: JobEngine;
let api: Api;
let stop: () => Promise<void>;

beforeAll(async () => {
  const env = { EVOLUTION_RECONCILE_AFTER_SECONDS: "1", EVOLUTION_STATE_POLL_SECONDS: "1", SEND_RETRY_SCHEDULE: "200,400" };
  const started = await startEvolutionWithRunner({ fake: { groupsPerInstance: groupCount }, env, channelLimit: 5, dispatchesPerLoop: 5 });
  ({ fake, api, stop } = started);
  poll = startJob(channelStatePollJob, started.services);
  expect(poll.kind).toBe("in-process");
});
afterAll(async () => {
  await poll.stop();
  await stop();
});

const channelStatus = async (id: string) => (await api("PUT", `/api/external/edit-channel/${id}`, { name: "Evo" })).json.status as string;

describe("fault: the gateway down mid-campaign", () => {
  it("channel offline → campaign paused (channel_offline) → resumed when the gateway is back → one message per group", async () => {
    const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Evo" });
    const channel = ch.id_channel as string;
    await fake.pair(channel);
    await until(
      () => channelStatus(channel),
      (s) => s === "connected",
    );
    const groups = (await api("GET", `/api/external/list-groups/${channel}`)).json.groups
      .map((g: { id_group: string }) => g.id_group)
      .filter((g: string) => fake.instances.get(channel)!.groups.some((x) => x.id === g && !x.announce && !x.isCommunityAnnounce))
      .slice(0, 40) as string[];
    expect(groups.length).toBe(40);
    const { json: seg } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups });
    // Each send takes a moment, so the outage lands mid-campaign.
    fake.knobs.latencyMs = 40;

    const created = await api("POST", "/api/external/create-campaign/message", { name: "Queda", id_segment: seg.id_segment, message: "Aula hoje" });
    expect(created.status).toBe(201);
    const id = created.json.id_campaign as string;
    // Polled in the database: info-campaign every 50 ms would meet the API key's rate limit.
    const db = await getDb();
    const campaignRow = async () => (await db.select().from(campaigns).where(eq(campaigns.id, id)))[0];
    await until(campaignRow, (c) => c.sent >= 5, 20_000);

    const downAt = Date.now();
    await fake.stop();
    const paused = await waitFor(
      "the campaign to pause as channel_offline",
      async () => {
        const c = await campaignRow();
        return c.status === "paused" && c.pauseReason === "channel_offline" ? c : undefined;
      },
      outageMs,
    );
    console.log(`[faults] gateway-down: paused (channel_offline) ${Date.now() - downAt} ms after the gateway went down, sent ${paused.sent}/40`);
    expect(await channelStatus(channel)).toBe("disconnected");
    expect(paused.sent).toBeLessThan(40);
    // Nothing moves while it is down.
    await new Promise((r) => setTimeout(r, Math.max(0, downAt + outageMs - Date.now())));
    expect((await campaignRow()).status).toBe("paused");

    const upAt = Date.now();
    await fake.start();
    await until(campaignRow, (c) => ["completed", "failed"].includes(c.status), 30_000);
    const done = await api("GET", `/api/external/info-campaign/${id}`);
    console.log(`[faults] gateway-down: completed ${Date.now() - upAt} ms after the gateway came back`);
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 40, sent: 40, pending: 0, failed: 0 } });
    await fake.idle();
    const perGroup = new Map<string, number>();
    for (const m of fake.messages.filter((x) => x.instance === channel)) perGroup.set(m.number, (perGroup.get(m.number) ?? 0) + 1);
    expect([...perGroup.entries()].sort()).toEqual([...groups].sort().map((g) => [g, 1]));
    expect(done.json.groups.sent).toBe(perGroup.size);

    // The story in the outbox: sending → paused (channel_offline) → sending → completed; disconnected → connected.
    const events = await db
      .select()
      .from(outboxEvents)
      .where(and(eq(outboxEvents.tenantId, api.tenantId)))
      .orderBy(asc(outboxEvents.id));
    const statuses = events
      .filter((e) => e.type === "campaign_status")
      .map((e) => (e.payload as { data: { id_campaign: string; status: string } }).data)
      .filter((d) => d.id_campaign === id)
      .map((d) => d.status);
    expect(statuses).toEqual(["pending", "sending", "paused", "sending", "completed"]);
    const channelEvents = events.filter((e) => e.type === "channel_status").map((e) => (e.payload as { data: { status: string } }).data.status);
    expect(channelEvents.slice(-2)).toEqual(["disconnected", "connected"]);
  }, 60_000);
});
