/**
 * `npm run bench -- scale [--db pglite|postgres] [--tenants 200] [--groups 20] [--big 20000]`: scale and
 * fairness of dispatch on the real server (.next/serve.cjs, as `npm start`), docs/benchmarks.md#scale-and-fairness.
 *
 * `tenants` tenants each have one channel and one campaign paced at 1–2 s (min/max_dispatch_rate, one
 * message per loop) over `groups` groups; one more tenant has a `big`-group campaign at zero pacing (100
 * per loop) over several channels. The big one is created first, then all the paced ones at once. From
 * the simulator's message log (GET /api/simulator/messages):
 *  - gaps: the pauses between consecutive sends of a paced campaign outside [min, max + 250 ms];
 *  - start lateness: a campaign's first send minus its creation (it is due at once), p50/p99; created_at is
 *    given to the second, so the creation is taken as the later of created_at and the moment the create
 *    request was sent (both at or before the real one: the figure is never flattered);
 *  - exactly once: every group of every campaign has exactly one message;
 *  - all done: from the first create request to the last send of all campaigns;
 * and the server's CPU seconds and peak RSS (/proc) over the run. Targets: 0 % of gaps outside, lateness
 * p99 < 1 s. A missed target is reported, not a failure.
 */
import os from "node:os";
import { apiClient, type Api } from "../e2e/server-process";
import {
  dbKind,
  freshTarget,
  makeTenants,
  mapLimit,
  option,
  printTable,
  quantile,
  round,
  serverMeter,
  sleep,
  startBenchServer,
  statementLog,
  stopServer,
  type DbKind,
  type ServerProcess,
} from "./common";

export interface ScaleOptions {
  kind: DbKind;
  tenants: number;
  groups: number;
  big: number;
  /** Simulator milliseconds per message for the big tenant (0: as fast as the server goes). */
  bigLatencyMs: number;
  timeoutS: number;
}

export type ScaleFigures = Record<string, number | string | boolean>;

const PACE = { min: 1, max: 2 };
const TOLERANCE_MS = 250;
const BIG_CHANNELS = 8;
const log = (line: string) => console.log(`[scale] ${line}`);

export function scaleOptions(args: string[]): ScaleOptions {
  const num = (name: string, envName: string, fallback: number) => {
    const v = Number(option(args, name, envName, String(fallback)));
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
    return v;
  };
  return {
    kind: dbKind(args),
    tenants: num("tenants", "SCALE_TENANTS", 200),
    groups: num("groups", "SCALE_GROUPS", 20),
    big: num("big", "SCALE_BIG", 20_000),
    bigLatencyMs: num("big-latency-ms", "SCALE_BIG_LATENCY_MS", 0),
    timeoutS: num("timeout", "SCALE_TIMEOUT_S", 900),
  };
}

interface Message {
  id_group: string;
  sent_at: string;
}

export async function runScale(o: ScaleOptions): Promise<ScaleFigures> {
  const target = await freshTarget(o.kind, "scale", log);
  let server: ServerProcess | undefined;
  try {
    const perChannel = Math.max(o.groups, Math.ceil(o.big / BIG_CHANNELS));
    const t = performance.now();
    const keys = await makeTenants(target, o.tenants + 1, "scale");
    log(`${o.tenants + 1} tenants made in ${round((performance.now() - t) / 1000)} s`);
    const statements = statementLog("scale");
    server = await startBenchServer(
      target,
      "scale",
      {
        SIMULATOR_GROUPS_PER_CHANNEL: String(perChannel),
        SEGMENT_GROUP_LIMIT: String(Math.max(50_000, o.big)),
        RATE_LIMIT_API_KEY_PER_MINUTE: "1000000",
        ...statements.env,
      },
      log,
    );
    const url = server.url;
    const apis: Api[] = keys.map((k) => apiClient(() => url, k.api_key));
    const bigApi = apis[0];
    const pacedApis = apis.slice(1);

    // The big tenant: BIG_CHANNELS channels, zero pacing, 100 per loop.
    const bigChannels: string[] = [];
    const bigGroups: string[] = [];
    for (let c = 0; c < BIG_CHANNELS && bigGroups.length < o.big; c++) {
      const ch = await bigApi.post("/api/external/create-channel", { name: `Big ${c}` });
      bigChannels.push(ch.id_channel as string);
      const listed = (await bigApi.get(`/api/external/list-groups/${ch.id_channel as string}`)).groups as { id_group: string }[];
      bigGroups.push(...listed.slice(0, o.big - bigGroups.length).map((g) => g.id_group));
    }
    const bigSegment = (await bigApi.post("/api/external/create-segment", { name: "Big", id_channel: bigChannels, groups: bigGroups })).id_segment as string;
    await bigApi.patch("/api/external/edit-settings", {
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100, min_campaign_interval: 0, max_campaign_interval: 0 },
    });
    await bigApi.post("/api/simulator/latency", { ms: o.bigLatencyMs });

    // The paced tenants: one channel, `groups` groups, 1–2 s between loops of one message.
    const t1 = performance.now();
    const pacedSegments = await mapLimit(pacedApis, 10, async (api, i) => {
      const ch = await api.post("/api/external/create-channel", { name: `Paced ${i}` });
      const listed = (await api.get(`/api/external/list-groups/${ch.id_channel as string}`)).groups as { id_group: string }[];
      const groups = listed.slice(0, o.groups).map((g) => g.id_group);
      const segment = await api.post("/api/external/create-segment", { name: `Paced ${i}`, id_channel: [ch.id_channel], groups });
      await api.patch("/api/external/edit-settings", {
        dispatch_rates: {
          min_dispatch_rate: PACE.min,
          max_dispatch_rate: PACE.max,
          dispatches_per_loop: 1,
          min_campaign_interval: 0,
          max_campaign_interval: 0,
        },
      });
      await api.post("/api/simulator/latency", { ms: 0 });
      return segment.id_segment as string;
    });
    log(
      `setup: big segment of ${bigGroups.length} groups on ${bigChannels.length} channels, ${o.tenants} paced tenants in ${round((performance.now() - t1) / 1000)} s`,
    );
    await sleep(2000);

    const meter = serverMeter(() => (server ? [server] : []));
    meter.start();
    statements.mark();
    const startedAt = Date.now();
    // When each create request was sent: created_at is given to the second (the spec's format), so a
    // campaign's start lateness is measured from the later of the two (both at or before its real creation).
    const requestedAt = new Map<string, number>();
    const created = async (api: Api, body: Record<string, unknown>) => {
      const sentAt = Date.now();
      const r = await api.request("POST", "/api/external/create-campaign/message", body);
      if (r.status !== 201) throw new Error(`create-campaign answered ${r.status}: ${JSON.stringify(r.json)}`);
      requestedAt.set(r.json.id_campaign as string, sentAt);
      return r.json.id_campaign as string;
    };
    const createdAt = (id: string) => Math.max(requestedAt.get(id) ?? 0, Date.parse(info.get(id)?.created_at as string));
    const bigCampaign = o.big > 0 ? await created(bigApi, { name: "Big", id_segment: bigSegment, message: "Para todos" }) : undefined;
    const pacedCampaigns = await mapLimit(pacedApis, 20, (api, i) => created(api, { name: `Paced ${i}`, id_segment: pacedSegments[i], message: "Devagar" }));
    log(`created ${pacedCampaigns.length + (bigCampaign ? 1 : 0)} campaigns in ${Date.now() - startedAt} ms`);

    // Wait for all to finish (coarse polling: the figures come from the message log, not from here).
    const all = [...(bigCampaign ? [{ api: bigApi, id: bigCampaign }] : []), ...pacedCampaigns.map((id, i) => ({ api: pacedApis[i], id }))];
    const info = new Map<string, Record<string, unknown>>();
    let open = all;
    // No paced campaign can finish before its groups − 1 pauses: no polling (load on the server measured) before.
    await sleep(Math.max(0, (o.groups - 1) * PACE.min * 1000 - 2000));
    while (open.length > 0) {
      if (Date.now() - startedAt > o.timeoutS * 1000) throw new Error(`${open.length} campaigns not finished after ${o.timeoutS} s`);
      await sleep(2000);
      const states = await mapLimit(open, 8, async (c) => {
        // A poll that times out on a starved machine is asked again at the next turn.
        const r = await c.api.get(`/api/external/info-campaign/${c.id}`).catch(() => ({ status: "unknown" }) as Record<string, unknown>);
        if (r.status === "unknown") return false;
        info.set(c.id, r);
        return ["completed", "failed", "canceled"].includes(r.status as string);
      });
      open = open.filter((_, i) => !states[i]);
    }
    const figuresCpu = meter.stop();
    await statements.report(o.tenants * o.groups + bigGroups.length);
    log(`all finished after ${round((Date.now() - startedAt) / 1000)} s (polled)`);

    // The message log of each campaign.
    let exactlyOnce = true;
    const problems: string[] = [];
    const gaps: number[] = [];
    const lateness: number[] = [];
    let lastSend = 0;
    const check = (id: string, messages: Message[], expected: number) => {
      const distinct = new Set(messages.map((m) => m.id_group)).size;
      if (messages.length !== expected || distinct !== expected) {
        exactlyOnce = false;
        problems.push(`${id}: ${messages.length} messages to ${distinct} groups, expected ${expected}`);
      }
      const c = info.get(id);
      if (c?.status !== "completed") problems.push(`${id}: ${String(c?.status)}`);
    };
    const pacedTimes = await mapLimit(pacedCampaigns, 8, async (id, i) => {
      const messages = (await pacedApis[i].get(`/api/simulator/messages?id_campaign=${id}`)).messages as Message[];
      check(id, messages, o.groups);
      const times = messages.map((m) => Date.parse(m.sent_at)).sort((a, b) => a - b);
      if (times.length) lateness.push(times[0] - createdAt(id));
      for (let k = 1; k < times.length; k++) gaps.push(times[k] - times[k - 1]);
      return times;
    });
    for (const times of pacedTimes) if (times.length) lastSend = Math.max(lastSend, times[times.length - 1]);
    const pacedDone = lastSend;
    let bigFigures: ScaleFigures = {};
    let bigEnd = startedAt;
    if (bigCampaign) {
      const messages = (await bigApi.get(`/api/simulator/messages?id_campaign=${bigCampaign}`)).messages as Message[];
      check(bigCampaign, messages, bigGroups.length);
      const times = messages.map((m) => Date.parse(m.sent_at)).sort((a, b) => a - b);
      const bigCreatedAt = createdAt(bigCampaign);
      lastSend = Math.max(lastSend, times[times.length - 1]);
      bigEnd = times[times.length - 1];
      bigFigures = {
        big_lateness_ms: times[0] - bigCreatedAt,
        big_seconds: round((times[times.length - 1] - bigCreatedAt) / 1000, 1),
        big_sends_per_second: round(times.length / Math.max(0.001, (times[times.length - 1] - times[0]) / 1000), 0),
      };
    }
    for (const p of problems.slice(0, 10)) log(`problem: ${p}`);
    // Where the gaps above the window sit: during the start burst, beside the zero-pacing campaign, or after it.
    const lateGapsAt = pacedTimes.flatMap((times) => times.slice(1).flatMap((t, k) => (t - times[k] > PACE.max * 1000 + TOLERANCE_MS ? [t - startedAt] : [])));
    if (lateGapsAt.length > 0) {
      log(
        `gaps above the window end at ${[0.1, 0.5, 0.9].map((q) => round(quantile(lateGapsAt, q) / 1000)).join(" / ")} s (p10/p50/p90) after the first create request; ` +
          `${lateGapsAt.filter((t) => t < 5000).length} in the first 5 s, ${lateGapsAt.filter((t) => t <= bigEnd - startedAt).length} while the zero-pacing campaign ran`,
      );
    }
    const below = gaps.filter((g) => g < PACE.min * 1000).length;
    const above = gaps.filter((g) => g > PACE.max * 1000 + TOLERANCE_MS).length;
    return {
      db: o.kind,
      config: `${o.tenants} × ${o.groups} groups paced ${PACE.min}–${PACE.max} s + ${o.big} at zero pacing`,
      gaps: gaps.length,
      gaps_outside_percent: round((100 * (below + above)) / Math.max(1, gaps.length), 2),
      gaps_below_min: below,
      gaps_above_max: above,
      gap_p50_ms: quantile(gaps, 0.5),
      gap_p99_ms: quantile(gaps, 0.99),
      gap_max_ms: gaps.length ? Math.max(...gaps) : 0,
      lateness_p50_ms: quantile(lateness, 0.5),
      lateness_p99_ms: quantile(lateness, 0.99),
      lateness_max_ms: lateness.length ? Math.max(...lateness) : 0,
      ...bigFigures,
      paced_done_s: round((pacedDone - startedAt) / 1000, 1),
      all_done_s: round((lastSend - startedAt) / 1000, 1),
      exactly_once: exactlyOnce,
      all_completed: problems.length === 0,
      server_cpu_s: figuresCpu.cpu_s,
      server_cpu_percent: figuresCpu.cpu_percent,
      server_rss_peak_mb: figuresCpu.rss_peak_mb,
      load_avg: round(os.loadavg()[0], 1),
    };
  } finally {
    if (server) await stopServer(server).catch(() => {});
    await target.cleanup();
  }
}

export function printScale(rows: ScaleFigures[]) {
  const keys = Object.keys(rows[0]).filter((k) => k !== "db");
  const targets: Record<string, string> = { gaps_outside_percent: "0", lateness_p99_ms: "< 1000" };
  printTable([["figure", ...rows.map((r) => String(r.db)), "target"], ...keys.map((k) => [k, ...rows.map((r) => String(r[k] ?? "")), targets[k] ?? ""])]);
}

export async function mainScale(args: string[]) {
  const o = scaleOptions(args);
  log(`options: ${JSON.stringify(o)}`);
  const f = await runScale(o);
  printScale([f]);
  console.log(JSON.stringify({ bench: "scale", options: o, ...f }));
}
