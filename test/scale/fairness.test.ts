/**
 * The short version of `npm run bench -- scale` (docs/benchmarks.md#scale-and-fairness): 20 tenants, each
 * with a campaign paced at 1–2 s over 5 groups, all created at once beside another tenant's 500-group
 * campaign at zero pacing. Through the public surface (REST with API keys, the embedded runner as the server
 * starts it, the simulator's message log): every campaign completes with exactly one message per group, no
 * paced gap is shorter than min_dispatch_rate, and the paced campaigns start on time (p99 of first send
 * minus created_at under 5 s, generous as the machine is shared: the bench's target is 1 s; or, when even a
 * loop of the big campaign takes over a second, in proportion to that loop).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

const TENANTS = 20;
const PACED_GROUPS = 5;
const BIG = 500;
const PACE = { min: 1, max: 2 };

let server: TestServer;
let runner: InProcessRunner;
const saved = { ...process.env };

beforeAll(async () => {
  process.env.SIMULATOR_GROUPS_PER_CHANNEL = String(BIG);
  process.env.RATE_LIMIT_API_KEY_PER_MINUTE = "1000000";
  server = await startTestServer();
  runner = new InProcessRunner(await getServices()).start();
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  process.env = saved;
});

async function tenantWith(groupCount: number, rates: Record<string, number>) {
  const api = await newTenant(server.url);
  expect((await api("PATCH", "/api/external/edit-settings", { dispatch_rates: { min_campaign_interval: 0, max_campaign_interval: 0, ...rates } })).status).toBe(
    200,
  );
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Canal" });
  const groups: string[] = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups
    .slice(0, groupCount)
    .map((g: { id_group: string }) => g.id_group);
  const seg = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups });
  expect(seg.status).toBe(201);
  return { api, segment: seg.json.id_segment as string, groups };
}

const create = async (api: Api, segment: string) => {
  const res = await api("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: segment, message: "Olá!" });
  expect(res.status).toBe(201);
  return res.json.id_campaign as string;
};

/** A GET, once more if the connection was reset (a keep-alive socket the server had just closed: not what is measured). */
async function get(api: Api, path: string) {
  try {
    return (await api("GET", path)).json;
  } catch {
    return (await api("GET", path)).json;
  }
}

it(`${TENANTS} paced campaigns beside a ${BIG}-group zero-pacing one: all complete once per group, none faster than its pace, all start on time`, async () => {
  const big = await tenantWith(BIG, { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100 });
  const paced: Awaited<ReturnType<typeof tenantWith>>[] = [];
  for (let i = 0; i < TENANTS; i++)
    paced.push(await tenantWith(PACED_GROUPS, { min_dispatch_rate: PACE.min, max_dispatch_rate: PACE.max, dispatches_per_loop: 1 }));

  const bigCampaign = await create(big.api, big.segment);
  const pacedCampaigns = await Promise.all(paced.map((p) => create(p.api, p.segment)));
  const all = [{ api: big.api, id: bigCampaign, groups: BIG }, ...paced.map((p, i) => ({ api: p.api, id: pacedCampaigns[i], groups: PACED_GROUPS }))];

  // All finish (generous: the paced ones need about 4 × 1.5 s on an idle machine, minutes on a loaded one).
  const deadline = Date.now() + 240_000;
  const info = new Map<string, any>();
  for (let open = all; open.length > 0 && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 500));
    for (const c of open) info.set(c.id, await get(c.api, `/api/external/info-campaign/${c.id}`));
    open = open.filter((c) => !["completed", "failed", "canceled"].includes(info.get(c.id).status));
  }

  const gaps: number[] = [];
  const lateness: number[] = [];
  let bigLoopMs = 0;
  for (const c of all) {
    expect(info.get(c.id)).toMatchObject({ status: "completed", groups: { total: c.groups, sent: c.groups, failed: 0 } });
    const messages: { id_group: string; sent_at: string }[] = (await get(c.api, `/api/simulator/messages?id_campaign=${c.id}`)).messages;
    expect(messages).toHaveLength(c.groups);
    expect(new Set(messages.map((m) => m.id_group)).size).toBe(c.groups);
    if (c.id === bigCampaign) {
      const times = messages.map((m) => Date.parse(m.sent_at)).sort((a, b) => a - b);
      bigLoopMs = (times[times.length - 1] - times[0]) / (BIG / 100 - 1);
      continue;
    }
    const times = messages.map((m) => Date.parse(m.sent_at)).sort((a, b) => a - b);
    lateness.push(times[0] - Date.parse(info.get(c.id).created_at));
    for (let k = 1; k < times.length; k++) gaps.push(times[k] - times[k - 1]);
  }
  lateness.sort((a, b) => a - b);
  const p99 = lateness[Math.ceil(0.99 * lateness.length) - 1];
  // 5 s; on a machine so busy that one of the big campaign's loops (a runner round is as long as its
  // slowest step) takes longer, twice the rounds that 4 workers need to start all campaigns at once.
  const lateBound = Math.max(5000, 2 * Math.ceil(all.length / 4) * bigLoopMs);
  console.log(
    `[scale] gaps ${Math.min(...gaps)}–${Math.max(...gaps)} ms over ${gaps.length}; start lateness p50 ${lateness[lateness.length >> 1]} ms, ` +
      `p99 ${p99} ms (bound ${Math.round(lateBound)} ms; a loop of the big campaign ${Math.round(bigLoopMs)} ms)`,
  );
  expect(gaps).toHaveLength(TENANTS * (PACED_GROUPS - 1));
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(PACE.min * 1000);
  expect(p99).toBeLessThan(lateBound);
}, 400_000);
