/**
 * What holds the event loop while a campaign sends, in process: the bench's campaign (10,000 groups, 100 per
 * loop, zero pacing, 0 ms simulator) sent by every in-process engine (startBackground, as the server runs
 * them) while info-campaign is polled every 100 ms. Prints the loop's delay (monitorEventLoopDelay) and the
 * polls' latency, then, from a CPU profile taken meanwhile (node:inspector), the functions the samples
 * inside each long block (a 1 ms timer late by more than LOOP_BLOCK_MS, default 5) fall in: those that
 * hold the loop. Not part of `npm test`:
 * `npx vitest run --config bench/profile/vitest.config.ts bench/profile/loop-delay.test.ts` (DATABASE_URL=… for PostgreSQL).
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { getDb } from "../../db/client";
import { startBackground } from "../../inngest/start";
import { getServices } from "../../server/services";
import { newTenant } from "../../test/helpers";
import { startTestServer } from "../../test/http-server";

const GROUPS = Number(process.env.PROFILE_GROUPS ?? 10_000);
const BLOCK_MS = Number(process.env.LOOP_BLOCK_MS ?? 5);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface HeapNode {
  callFrame: ProfileNode["callFrame"];
  selfSize: number;
  children: HeapNode[];
}

/** Bytes allocated by the nearest frame of the project (server/, db/, inngest/) or, without one, by the allocating frame. */
function allocatedBy(head: HeapNode, messages: number) {
  const by = new Map<string, number>();
  let total = 0;
  const walk = (n: HeapNode, owner: string | undefined) => {
    const f = n.callFrame;
    const mine = /\/work\/h\d\/(server|db|inngest)\//.test(f.url)
      ? `${f.functionName || "(anonymous)"} ${f.url.replace(/.*\/work\/h\d\//, "")}:${f.lineNumber + 1}`
      : undefined;
    const at = mine ?? owner;
    if (n.selfSize > 0) {
      const key = at ?? `(no project frame) ${f.functionName || "(anonymous)"} ${f.url.replace(/.*node_modules\//, "nm:")}`;
      by.set(key, (by.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children) walk(c, at);
  };
  walk(head, undefined);
  const lines = [...by.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, v]) => `${((v / messages) | 0).toString().padStart(7)} B/message  ${k}`);
  return [`allocated ${(total / messages) | 0} B per message sent (sampled), by the nearest project frame:`, ...lines];
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;

/** The project's frames by the samples they are on (inclusive), within the blocked intervals. */
function attribute(profile: Profile, blocks: [number, number][]) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: ProfileNode) => {
    const f = n.callFrame;
    const url = f.url
      .replace(/^file:\/\//, "")
      .replace(/.*\/work\/h\d\//, "")
      .replace(/.*node_modules\//, "nm:");
    return `${f.functionName || "(anonymous)"} ${url}:${f.lineNumber + 1}`;
  };
  const inclusive = new Map<string, number>();
  const self = new Map<string, number>();
  let inBlocks = 0;
  let t = profile.startTime;
  let b = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    while (b < blocks.length && blocks[b][1] < t) b++;
    if (b >= blocks.length) break;
    if (t < blocks[b][0]) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    inBlocks += dt;
    const leaf = byId.get(profile.samples[i])!;
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const l = label(byId.get(id)!);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
    }
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, c) => c[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / Math.max(1, inBlocks)).toFixed(1).padStart(5)} %  ${k}`);
  return { inBlocksMs: inBlocks / 1000, self: top(self, 30), inclusive: top(inclusive, 60) };
}

it("finds what holds the loop while a campaign sends", async () => {
  const server = await startTestServer();
  const api = await newTenant(server.url);
  await api("PATCH", "/api/external/edit-settings", {
    dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100, min_campaign_interval: 0, max_campaign_interval: 0 },
  });
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Canal" });
  const groups = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.slice(0, GROUPS).map((g: { id_group: string }) => g.id_group);
  expect(groups.length).toBe(GROUPS);
  const { json: seg } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups });
  await api("POST", "/api/simulator/latency", { ms: 0 });
  const background = startBackground(await getServices());

  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  // Where the bytes are allocated (V8's sampling heap profiler, one sample per 16 KB on average, collected objects included).
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const gc: { kind: number; ms: number }[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gc.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration });
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  // A 1 ms timer: each time it fires late by more than BLOCK_MS, the interval it waited is a block.
  const blocks: [number, number][] = [];
  let last = nowUs();
  const ticker = setInterval(() => {
    const t = nowUs();
    if (t - last > (BLOCK_MS + 1) * 1000) blocks.push([last + 1000, t]);
    last = t;
  }, 1);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const created = await api("POST", "/api/external/create-campaign/message", { name: "Perfil", id_segment: seg.id_segment, message: "Olá!" });
  expect(created.status).toBe(201);
  const id = created.json.id_campaign;
  const pollMs: number[] = [];
  // Beside each poll, one bare round trip to the database through the same pool: what a request's statement waits
  // for whatever it is (a connection, the database's CPU), without the request's JavaScript.
  const db = await getDb();
  const roundTripMs: number[] = [];
  let info: { status: string; groups: { sent: number; failed: number } } = { status: "pending", groups: { sent: 0, failed: 0 } };
  while (!["completed", "failed", "canceled"].includes(info.status)) {
    await new Promise((r) => setTimeout(r, 100));
    const p0 = performance.now();
    info = (await api("GET", `/api/external/info-campaign/${id}`)).json;
    pollMs.push(performance.now() - p0);
    const r0 = performance.now();
    await db.execute(sql`select 1`);
    roundTripMs.push(performance.now() - r0);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(ticker);
  histogram.disable();
  gcObserver.disconnect();
  const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
  const { profile: heap } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: HeapNode } };
  session.disconnect();
  // PROFILE_OUT=<file.cpuprofile>: the profile itself, for Chrome's DevTools or speedscope.
  if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
  for (const s of background) await s.stop();

  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  const lengths = blocks.map(([a, b]) => (b - a) / 1000);
  const found = attribute(profile, blocks);
  const longest = [...blocks].sort((a, b) => b[1] - b[0] - (a[1] - a[0])).slice(0, 5);
  const each = longest.map((blk) => {
    const one = attribute(profile, [blk]);
    return [
      `block of ${((blk[1] - blk[0]) / 1000).toFixed(1)} ms (profiled ${one.inBlocksMs.toFixed(1)}):`,
      ...one.self.slice(0, 6),
      ...one.inclusive.filter((l) => /server\/|db\/|inngest\//.test(l)).slice(0, 6),
    ];
  });
  const gcKinds = new Map<number, number[]>();
  for (const g of gc) gcKinds.set(g.kind, [...(gcKinds.get(g.kind) ?? []), g.ms]);
  const gcLine = [...gcKinds.entries()]
    .map(([k, xs]) => `kind ${k}: ${xs.length}× total ${xs.reduce((s, x) => s + x, 0).toFixed(0)} ms max ${Math.max(...xs).toFixed(1)} ms`)
    .join("; ");
  console.log(
    [
      `${process.env.DATABASE_URL ? "postgres" : "pglite"}: ${info.groups.sent} sent, ${info.groups.failed} failed in ${seconds.toFixed(2)} s = ${(info.groups.sent / seconds).toFixed(0)} sends/s`,
      `CPU per message ${((cpu.user + cpu.system) / info.groups.sent).toFixed(0)} µs (this process; PGlite: the database's work included)`,
      `loop delay p50 ${ms(histogram.percentile(50))} p99 ${ms(histogram.percentile(99))} max ${ms(histogram.max)} ms`,
      `info-campaign during dispatch (${pollMs.length} polls) p50 ${quantile(pollMs, 0.5).toFixed(1)} p99 ${quantile(pollMs, 0.99).toFixed(1)} max ${Math.max(...pollMs).toFixed(1)} ms`,
      `a bare round trip (select 1) during dispatch p50 ${quantile(roundTripMs, 0.5).toFixed(1)} p99 ${quantile(roundTripMs, 0.99).toFixed(1)} max ${Math.max(...roundTripMs).toFixed(1)} ms`,
      `blocks > ${BLOCK_MS} ms: ${blocks.length}, ${lengths.reduce((s, x) => s + x, 0).toFixed(0)} ms in all, p50 ${quantile(lengths, 0.5).toFixed(1)} p99 ${quantile(lengths, 0.99).toFixed(1)} max ${Math.max(0, ...lengths).toFixed(1)} ms; profiled inside ${found.inBlocksMs.toFixed(0)} ms`,
      `GC (1 scavenge, 2 minor mark-sweep, 4 mark-compact, 8 incremental, 16 weak callbacks): ${gcLine}`,
      ...allocatedBy(heap.head, info.groups.sent),
      ...each.flat(),
      "self time inside the blocks:",
      ...found.self,
      "inclusive time inside the blocks:",
      ...found.inclusive,
    ].join("\n"),
  );
  expect(info.groups.sent).toBe(GROUPS);
  await server.close();
}, 600_000);
