/**
 * docs/decisions.md#limits-abuse-retention ("Fairness"): one tenant cannot starve another. Tenant A floods the engine with a
 * zero-pacing (0 s, 100 per loop) 20,000-group load; tenant B's paced campaign beside it keeps its pace:
 * its first send goes within a loop of being due, and its gaps stay within [min, max] + a tolerance.
 * Through the public surface: REST with API keys, the embedded runner as the server starts it, and the
 * simulator's message log for the send times.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { env } from "../../server/env";
import { newTenant, until, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

const GROUPS = 20_000;
/** The workers one tenant may hold (a quarter of InProcessRunner's default pool): A runs at most this many loops at once. */
const runnerConcurrency = Math.ceil(env.dispatchConcurrency / 4);
/**
 * The platform's time per message for A (set below): one loop of A (100 messages) takes 100 × this, and
 * A's `runnerConcurrency` loops side by side send its 20,000 in about 20 s, so A is still sending when B ends.
 */
const latencyMs = Math.max(5, runnerConcurrency);
const paced = { min: 1, max: 2, groups: 6 };

let server: TestServer;
let runner: InProcessRunner;
const saved = { ...process.env };

beforeAll(async () => {
  process.env.SIMULATOR_GROUPS_PER_CHANNEL = String(GROUPS);
  process.env.RATE_LIMIT_API_KEY_PER_MINUTE = "1000000";
  server = await startTestServer();
  // As the server starts it (default concurrency).
  runner = new InProcessRunner(await getServices()).start();
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  process.env = saved;
});

async function tenantWith(groupCount: number, rates: Record<string, number>, queue: "disabled" | "enabled" = "disabled") {
  const api = await newTenant(server.url);
  const settings = await api("PATCH", "/api/external/edit-settings", {
    dispatch_rates: { min_campaign_interval: 0, max_campaign_interval: 0, ...rates },
    queue: { concurrent_mode: queue },
  });
  expect(settings.status).toBe(200);
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Canal" });
  const groups: string[] = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups
    .slice(0, groupCount)
    .map((g: { id_group: string }) => g.id_group);
  expect(groups).toHaveLength(groupCount);
  return { api, channel: ch.id_channel as string, groups };
}

async function segment(api: Api, channel: string, groups: string[]) {
  const res = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups });
  expect(res.status).toBe(201);
  return res.json.id_segment as string;
}

async function campaign(api: Api, idSegment: string) {
  const res = await api("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: idSegment, message: "Olá!" });
  expect(res.status).toBe(201);
  return res.json.id_campaign as string;
}

const info = async (api: Api, id: string) => (await api("GET", `/api/external/info-campaign/${id}`)).json;

it.each([
  { label: "one campaign of 20,000 groups", perCampaign: GROUPS },
  { label: "40 campaigns of 500 groups sending at once", perCampaign: 500 },
])(
  "a tenant's zero-pacing 20,000 groups ($label) do not hold back another tenant's paced campaign by more than a loop",
  async ({ perCampaign }) => {
    const t0 = Date.now();
    // Tenant A: zero pacing, 100 per loop, no queue (its campaigns all send at once), 20,000 groups in all.
    const a = await tenantWith(GROUPS, { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100 }, "enabled");
    const aSegments: string[] = [];
    for (let i = 0; i < GROUPS; i += perCampaign) aSegments.push(await segment(a.api, a.channel, a.groups.slice(i, i + perCampaign)));
    // Tenant B: paced 1–2 s, one group per loop.
    const b = await tenantWith(paced.groups, { min_dispatch_rate: paced.min, max_dispatch_rate: paced.max, dispatches_per_loop: 1 });
    const bSegment = await segment(b.api, b.channel, b.groups);

    console.log(`[fairness] setup ${Date.now() - t0} ms`);
    // A's channels take 5 ms a message (the latency is per tenant: B's are unaffected):
    // one loop of A (100 messages) is then about 500 ms, and 20,000 groups take A well over B's run.
    expect((await a.api("POST", "/api/simulator/latency", { ms: latencyMs })).status).toBe(200);
    const aCampaigns: string[] = [];
    try {
      for (const s of aSegments) aCampaigns.push(await campaign(a.api, s));
      const aSent = async () => {
        let sent = 0;
        for (const id of aCampaigns) sent += (await info(a.api, id)).groups.sent;
        return sent;
      };
      // A is in full flow before B's campaign is due.
      await until(
        () => info(a.api, aCampaigns[0]),
        (c) => c.groups.sent > 0,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 1000));

      // B is due from its creation: between the request and its answer (the later bound is asserted).
      const aSentAtStart = await aSent();
      const requestedAt = Date.now();
      const bCampaign = await campaign(b.api, bSegment);
      const dueAt = Date.now();
      const done = await until(
        () => info(b.api, bCampaign),
        (c) => c.status === "completed",
        40_000,
      );
      expect(done.status).toBe("completed");
      const aSentAtEnd = await aSent();

      const log: { sent_at: string }[] = (await b.api("GET", `/api/simulator/messages?id_campaign=${bCampaign}`)).json.messages;
      const times = log.map((m) => Date.parse(m.sent_at));
      expect(times).toHaveLength(paced.groups);
      const firstDelay = times[0] - dueAt;
      const gaps = times.slice(1).map((t, i) => t - times[i]);
      // What one round of the runner is, measured on this machine under its present load: A's messages
      // per millisecond during B's run, and a round of up to `runnerConcurrency` loops of 100 of A's.
      const rate = (aSentAtEnd - aSentAtStart) / (Date.now() - requestedAt);
      const roundMessages = Math.min(runnerConcurrency, aCampaigns.length) * 100;
      const roundMs = Math.round(roundMessages / rate);
      // How many of A's messages went out between B being due and its first send: counted, so it does
      // not depend on how fast this machine is (the old selection let 2,000+ go first).
      let aBeforeB = 0;
      for (const id of aCampaigns) {
        const sent: { sent_at: string }[] = (await a.api("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages;
        aBeforeB += sent.filter((m) => Date.parse(m.sent_at) >= dueAt && Date.parse(m.sent_at) < times[0]).length;
      }
      const gapBound = paced.max * 1000 + 2 * roundMs + 1000;
      console.log(
        `[fairness] A in ${aCampaigns.length} campaign(s); B: created in ${dueAt - requestedAt} ms, first send ${firstDelay} ms after ` +
          `(${aBeforeB} of A's messages before it, allowed ${2 * roundMessages}); gaps ${gaps.join(", ")} ms ` +
          `(allowed ${paced.min * 1000}–${gapBound}, a round measured at ${roundMs} ms); A had sent ${aSentAtEnd} at B's end (${Date.now() - dueAt} ms)`,
      );
      // B's first send waits at most the round of A under way (no pause before a campaign's first loop);
      // in its own round A's other loops send beside it: at most two rounds of A's messages go first.
      // Each of B's gaps is its own pause plus about a round: never a queue of A's loops.
      expect(aBeforeB).toBeLessThanOrEqual(2 * roundMessages);
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(paced.min * 1000);
        expect(gap).toBeLessThanOrEqual(gapBound);
      }
      // A was still sending the whole time: the scenario really ran B beside A's flood.
      expect(aSentAtEnd).toBeLessThan(GROUPS);
    } finally {
      // Even when an assertion failed: A's flood must not go on into the next test (or file, on PostgreSQL).
      // A failed cancel is logged, not thrown: thrown from here it would hide the failure that brought us here.
      for (const id of aCampaigns) await a.api("POST", `/api/external/cancel-campaign/${id}`).catch((e) => console.error(`[fairness] cancel ${id} failed`, e));
    }
  },
  120_000,
);
