/**
 * `npm run bench [-- pglite|postgres|two-processes]`: dispatch figures of the real server (.next/serve.cjs, production
 * build) on embedded PGlite and on PostgreSQL (a fresh database on 127.0.0.1:5432, or BENCH_PG_URL's
 * server, created and dropped here). Not a test: a missed target is reported, never a failure.
 *
 *  - create_campaign_10k_ms: POST create-campaign/message for a 10,000-group segment (median of 5,
 *    after one warm-up; scheduled two days ahead so dispatch does not run meanwhile, then canceled);
 *  - sends_per_second: zero pacing, 0 ms simulator, dispatches_per_loop 100, from the create request
 *    to `completed`;
 *  - info_campaign p50/p99: 2,000 sequential GETs on that campaign once completed, after 1,000 not counted
 *    (warm-up), from a keep-alive node:http client; then 1,000 more through fetch (info_campaign_fetch_*);
 *  - server_peak_rss_mb: VmHWM of the server process (its process group) over the whole run;
 *  - server_first_start_*: PGlite only, a server started on an empty DATA_DIR (it creates the database):
 *    seconds to ready, its peak RSS, and its RSS 3 s later.
 *
 * `two-processes` (alone, never by default): sends/s of one server process against two on one PostgreSQL
 * database, 100 campaigns at once (bench/two-processes.ts).
 * `scale` (bench/scale.ts) and `load` (bench/load.ts), alone, never by default: scale and fairness of
 * dispatch with hundreds of tenants; HTTP load at the rate limit's ceiling with autocannon.
 *
 * `compare <ref> [pglite|postgres]` (alone): this bench on another commit (a git worktree), then on this checkout,
 * printed side by side (bench/compare.ts).
 * `exports` (alone, PostgreSQL): the server's RSS while 200,000 leads are exported as a streamed CSV (bench/exports.ts).
 *
 * `group-actions [pglite|postgres]` (alone): one group action over 500 groups by 2 admin numbers, its paced time
 * (measured at a shortened pace and computed at the real one) and statements per group (bench/group-actions.ts).
 *
 * `audit [pglite|postgres]` (alone, in process): what the audit entry adds to a mutation, and the send loop's sends/s
 * with the service's audit entries of a campaign (bench/audit.ts).
 *
 * `moderation [pglite|postgres]` (alone): 1,000 members' messages a minute judged by moderation while a campaign sends,
 * p50/p99 per message and the campaign's sends/s against the same campaign alone (bench/moderation.ts).
 *
 * `two-numbers [pglite|postgres]` (alone, in process): a campaign over groups reached by two numbers (both admins,
 * health on) against the same campaign over one number: sends/s of each, the ratio, statements per message, exactly
 * once checked in every run (bench/two-numbers.ts).
 *
 * `link [pglite|postgres]` (alone): the launches' public join link at 200 requests/s, p50/p99 and the
 * clicks stored (bench/link.ts).
 *
 * Prints each figure on its own line with its target, then one JSON line with all of them.
 */
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { Groups } from "../e2e/crash-common";
import { apiClient, createDatabase, createTenant, freePort, root, startServer, stopServer, tempDataDir, type ServerProcess } from "../e2e/server-process";
import { ensureBuild } from "../scripts/ensure-build";
import { mainCompare } from "./compare";
import { mainLoad } from "./load";
import { mainScale } from "./scale";
import { groupPids, statementLog } from "./common";
import { benchExports } from "./exports";
import { benchGroupActions } from "./group-actions";
import { benchLink } from "./link";
import { benchModeration } from "./moderation";
import { benchParticipants } from "./participants";
import { benchAudit } from "./audit";
import { benchTwoNumbers } from "./two-numbers";
import { benchTwoProcesses } from "./two-processes";
import { benchWebhooks, type WebhookFigures } from "./webhooks";

/** BENCH_GROUPS: the segment's size (10,000; a smaller one only to check the bench runs, its figures are not comparable). */
const GROUPS = Number(process.env.BENCH_GROUPS ?? 10_000);
const CREATE_RUNS = 5;
const INFO_WARMUP = 1000;
const INFO_GETS = 2000;
const INFO_FETCH_GETS = 1000;
const DISPATCH_TIMEOUT_MS = Number(process.env.BENCH_DISPATCH_TIMEOUT_MS ?? 300_000);
const pgBase = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
/** BENCH_DISPATCH_ONLY=1: create-campaign and sends/s only (no info-campaign series, first start or webhooks). */
const dispatchOnly = process.env.BENCH_DISPATCH_ONLY === "1";

const targets = {
  create_segment_10k_ms: "",
  create_campaign_10k_ms: "< 300",
  sends_per_second: ">= 1000",
  info_campaign_p50_ms: "",
  info_campaign_p99_ms: "< 10",
  server_peak_rss_mb: "< 400",
} as const;

const loadAvg = () => round(os.loadavg()[0], 2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.log(`[bench] ${line}`);

function quantile(values: number[], q: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
const median = (values: number[]) => quantile(values, 0.5);

/** kB from a /proc/<pid>/status field. */
function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Polls the group's RSS; `peakMb()` is the larger of the polled sum and the kernel's high-water marks. */
function memoryWatcher(server: ServerProcess) {
  let peakSumKb = 0;
  const hwm = new Map<number, number>();
  const sample = () => {
    let sum = 0;
    for (const pid of groupPids(server.pid)) {
      sum += statusKb(pid, "VmRSS");
      hwm.set(pid, Math.max(hwm.get(pid) ?? 0, statusKb(pid, "VmHWM")));
    }
    peakSumKb = Math.max(peakSumKb, sum);
  };
  sample();
  const timer = setInterval(sample, 200);
  return {
    stop() {
      sample();
      clearInterval(timer);
    },
    peakMb: () =>
      round(
        Math.max(
          peakSumKb,
          [...hwm.values()].reduce((a, b) => a + b, 0),
        ) / 1024,
        0,
      ),
    /** Current RSS of the group, MB. */
    nowMb: () => round(groupPids(server.pid).reduce((sum, pid) => sum + statusKb(pid, "VmRSS"), 0) / 1024, 0),
    serverHwmMb: () => round((hwm.get(server.pid) ?? 0) / 1024, 0),
  };
}

/** Sequential GETs over one keep-alive connection; resolves with each call's milliseconds. */
function leanClient(baseUrl: string, apiKey: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (p: string) =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        http
          .get(`${baseUrl}${p}`, { agent, headers: { "x-api-key": apiKey } }, (res) => {
            res.resume();
            res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`GET ${p} answered ${res.statusCode}`))));
          })
          .on("error", reject);
      }),
    close: () => agent.destroy(),
  };
}

/** DD/MM/YYYY - HH:mm in Brasília (UTC-3, no DST since 2019), two days from now. */
function scheduledInTwoDays() {
  const d = new Date(Date.now() + 2 * 86_400_000 - 3 * 3_600_000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getUTCDate())}/${p(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} - ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

type Figures = Record<string, number | string | number[] | Record<string, number> | null>;

async function benchOne(kind: "pglite" | "postgres"): Promise<Figures> {
  const temp = tempDataDir("gcs-bench-");
  const dataDir = temp.dir;
  const logFile = path.join(root, ".test-data", `bench-server-${kind}.log`);
  rmSync(logFile, { force: true });
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let server: ServerProcess | undefined;
  let memory: ReturnType<typeof memoryWatcher> | undefined;
  // BENCH_STATEMENTS=1: statements per operation (create-segment, create-campaign, info-campaign, per message sent).
  const statements = statementLog(`dispatch-${kind}`);
  const perOp: Record<string, number> = {};
  const countOp = async (name: string, ops: number) => {
    const n = await statements.since();
    if (n === null) return;
    perOp[name] = round(n.total / ops, 2);
    log(`${kind}: statements for ${name} (${ops} operations), the most frequent:`);
    for (const [text, count] of n.top) log(`  ${round(count / ops, 2)} per operation: ${text.replace(/\s+/g, " ").slice(0, 140)}`);
  };
  try {
    if (kind === "postgres") {
      database = await createDatabase(pgBase, "gcs_bench");
      log(`${kind}: fresh database ${database.name}`);
    }
    const target = { dataDir, databaseUrl: database?.url };
    const tenant = await createTenant({ ...target, name: "Bench", email: `bench-${Date.now().toString(36)}@example.com`, password: "senha-segura-bench-123" });
    server = await startServer({
      port: await freePort(),
      ...target,
      logFile,
      log: (line) => log(`${kind}: ${line}`),
      env: { SIMULATOR_GROUPS_PER_CHANNEL: String(GROUPS), RATE_LIMIT_API_KEY_PER_MINUTE: "1000000", SEGMENT_GROUP_LIMIT: "50000", ...statements.env },
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the server, written when it stops (open it in Chrome DevTools).
      // BENCH_NODE_ARGS: more Node flags for the server (space-separated), e.g. to try V8 heap settings.
      nodeArgs: [
        ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []),
        ...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      ],
    });
    memory = memoryWatcher(server);
    const rssByPhase: Record<string, number> = { ready: memory.nowMb() };
    const url = server.url;
    const api = apiClient(() => url, tenant.api_key);

    const channel = await api.post("/api/external/create-channel", { name: "Bench" });
    const groups = ((await api.get(`/api/external/list-groups/${channel.id_channel as string}`)).groups as { id_group: string }[]).map((g) => g.id_group);
    if (groups.length !== GROUPS) throw new Error(`expected ${GROUPS} groups, got ${groups.length}`);
    // create-segment for those groups: median of 3 (the last one is the one used).
    const segmentMs: number[] = [];
    let segment: Record<string, unknown> = {};
    statements.mark();
    for (let run = 0; run < 3; run++) {
      const r = await api.request("POST", "/api/external/create-segment", { name: `Bench 10k ${run}`, id_channel: [channel.id_channel], groups });
      if (r.status !== 201) throw new Error(`create-segment answered ${r.status}: ${JSON.stringify(r.json)}`);
      segmentMs.push(round(r.ms));
      segment = r.json;
    }
    log(`${kind}: create-segment runs (ms): ${segmentMs.join(", ")}`);
    await countOp("create_segment", 3);
    await api.patch("/api/external/edit-settings", {
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100, min_campaign_interval: 0, max_campaign_interval: 0 },
    });
    await api.post("/api/simulator/latency", { ms: 0 });
    log(`${kind}: tenant, channel, ${GROUPS}-group segment and settings ready`);
    rssByPhase.segment_created = memory.nowMb();

    // 1. create-campaign for 10k groups, scheduled (so the engine stays idle), then canceled.
    const createMs: number[] = [];
    const createStatements: number[] = [];
    for (let run = 0; run <= CREATE_RUNS; run++) {
      statements.mark();
      const r = await api.request("POST", "/api/external/create-campaign/message", {
        name: `Bench scheduled ${run}`,
        id_segment: segment.id_segment,
        message: "Bench",
        scheduled_at: scheduledInTwoDays(),
      });
      if (r.status !== 201) throw new Error(`create-campaign answered ${r.status}: ${JSON.stringify(r.json)}`);
      if (run > 0) createMs.push(round(r.ms));
      const n = await statements.since();
      if (n !== null) createStatements.push(n.total);
      if (n !== null && run === CREATE_RUNS)
        for (const [text, count] of n.top) log(`${kind}: create-campaign statement x${count}: ${text.replace(/\s+/g, " ").slice(0, 140)}`);
      await api.post(`/api/external/cancel-campaign/${r.json.id_campaign as string}`, {});
    }
    const create = round(median(createMs));
    rssByPhase.campaigns_created = memory.nowMb();
    log(`${kind}: create-campaign runs (ms, after one warm-up): ${createMs.join(", ")}`);

    if (createStatements.length) perOp.create_campaign = Math.min(...createStatements);
    // 2. Dispatch throughput: from the create request to completed.
    statements.mark();
    const t0 = performance.now();
    const created = await api.request("POST", "/api/external/create-campaign/message", { name: "Bench run", id_segment: segment.id_segment, message: "Bench" });
    if (created.status !== 201) throw new Error(`create-campaign answered ${created.status}: ${JSON.stringify(created.json)}`);
    const idCampaign = created.json.id_campaign as string;
    const samples: { t: number; sent: number }[] = [];
    const pollMs: number[] = [];
    let status = "pending";
    let groupsNow: Groups = { total: GROUPS, sent: 0, pending: GROUPS, failed: 0 };
    while (status !== "completed" && status !== "failed" && status !== "canceled") {
      if (performance.now() - t0 > DISPATCH_TIMEOUT_MS) break;
      await sleep(100);
      const r = await api.request("GET", `/api/external/info-campaign/${idCampaign}`);
      pollMs.push(r.ms);
      status = r.json.status as string;
      groupsNow = r.json.groups as Groups;
      samples.push({ t: performance.now() - t0, sent: groupsNow.sent });
    }
    const elapsedS = (performance.now() - t0) / 1000;
    const finished = status === "completed";
    const overall = groupsNow.sent / elapsedS;
    // Steady state: between the polls that saw 10% and 90% sent.
    const a = samples.find((s) => s.sent >= GROUPS * 0.1);
    const b = samples.find((s) => s.sent >= GROUPS * 0.9);
    const steady = a && b && b.t > a.t ? (b.sent - a.sent) / ((b.t - a.t) / 1000) : null;
    log(
      `${kind}: campaign ${status} with ${groupsNow.sent}/${GROUPS} sent, ${groupsNow.failed} failed in ${round(elapsedS, 2)} s` +
        `${finished ? "" : ` (gave up after ${DISPATCH_TIMEOUT_MS / 1000} s)`}; steady state 10–90%: ${steady ? round(steady, 0) : "n/a"} sends/s`,
    );

    rssByPhase.dispatched = memory.nowMb();
    // Per message sent (the create request and the polls included: a few dozen statements over the run).
    await countOp("dispatch_per_message", Math.max(1, groupsNow.sent));
    statements.mark();

    // 3. info-campaign latency on the finished campaign, sequential, after a warm-up: until V8 has
    // compiled the request path, the first few hundred calls measure the JIT, not the service. The
    // client is a keep-alive node:http one, as load tools are (autocannon, wrk): undici's fetch costs
    // this 2-core machine about a millisecond per call that the server then does not get. fetch's
    // figures are printed too.
    const infoPath = `/api/external/info-campaign/${idCampaign}`;
    const lean = leanClient(url, tenant.api_key);
    for (let i = 0; i < (dispatchOnly ? 0 : INFO_WARMUP); i++) await lean.get(infoPath);
    const infoMs: number[] = [];
    for (let i = 0; i < (dispatchOnly ? 1 : INFO_GETS); i++) infoMs.push(await lean.get(infoPath));
    lean.close();
    const infoFetchMs: number[] = [];
    for (let i = 0; i < (dispatchOnly ? 1 : INFO_FETCH_GETS); i++) {
      const r = await api.request("GET", infoPath);
      if (r.status !== 200) throw new Error(`info-campaign answered ${r.status}`);
      infoFetchMs.push(r.ms);
    }

    await countOp("info_campaign", (dispatchOnly ? 0 : INFO_WARMUP) + infoMs.length + infoFetchMs.length);
    memory.stop();
    rssByPhase.end = memory.nowMb();
    log(`${kind}: server RSS by phase (MB): ${JSON.stringify(rssByPhase)}`);
    return {
      create_segment_10k_ms: round(median(segmentMs)),
      create_campaign_10k_ms: create,
      create_campaign_10k_runs_ms: createMs,
      create_campaign_10k_immediate_ms: round(created.ms),
      sends_per_second: round(overall, 0),
      sends_per_second_steady: steady === null ? null : round(steady, 0),
      dispatch_seconds: round(elapsedS, 2),
      dispatch_completed: finished ? 1 : 0,
      info_campaign_p50_ms: round(quantile(infoMs, 0.5), 2),
      info_campaign_p99_ms: round(quantile(infoMs, 0.99), 2),
      info_campaign_p90_ms: round(quantile(infoMs, 0.9), 2),
      info_campaign_fetch_p50_ms: round(quantile(infoFetchMs, 0.5), 2),
      info_campaign_fetch_p99_ms: round(quantile(infoFetchMs, 0.99), 2),
      info_campaign_during_dispatch_p50_ms: pollMs.length ? round(quantile(pollMs, 0.5), 2) : null,
      info_campaign_during_dispatch_p99_ms: pollMs.length ? round(quantile(pollMs, 0.99), 2) : null,
      server_peak_rss_mb: memory.peakMb(),
      server_rss_mb_by_phase: rssByPhase,
      ...Object.fromEntries(Object.entries(perOp).map(([k, v]) => [`statements_${k}`, v])),
    };
  } finally {
    memory?.stop();
    if (server) await stopServer(server).catch(() => {});
    if (database) await database.drop().catch((err: Error) => log(`could not drop ${database!.name}: ${err.message}`));
    temp.remove();
  }
}

function report(kind: string, f: Figures) {
  for (const [key, target] of Object.entries(targets)) {
    const value = f[key];
    let verdict = "";
    if (typeof value === "number" && target) {
      const [op, limit] = target.split(" ") as [string, string];
      const ok = op === "<" ? value < Number(limit) : value >= Number(limit);
      verdict = ok ? " ok" : " MISSED";
    }
    console.log(`${kind} ${key}: ${value ?? "n/a"}${target ? ` (target ${target})${verdict}` : ""}`);
  }
  for (const key of [
    "info_campaign_p90_ms",
    "info_campaign_fetch_p50_ms",
    "info_campaign_fetch_p99_ms",
    "sends_per_second_steady",
    "dispatch_seconds",
    "create_campaign_10k_immediate_ms",
    "info_campaign_during_dispatch_p50_ms",
    "info_campaign_during_dispatch_p99_ms",
    "server_rss_mb_by_phase",
    "server_first_start_ready_s",
    "server_first_start_peak_rss_mb",
    "server_first_start_rss_mb",
    ...Object.keys(f).filter((k) => k.startsWith("statements_")),
  ]) {
    if (!(key in f)) continue;
    console.log(`${kind} ${key}: ${JSON.stringify(f[key] ?? null)}`);
  }
}

/**
 * The first start of `npm start` on an empty DATA_DIR: the database is created then (PGlite's initdb, in a
 * child process of the server), and migrated. Peak and settled RSS of the server process itself.
 */
async function benchFirstStart(): Promise<Figures> {
  const temp = tempDataDir("gcs-bench-first-");
  const dataDir = temp.dir;
  let server: ServerProcess | undefined;
  try {
    const t0 = performance.now();
    server = await startServer({ port: await freePort(), dataDir, logFile: path.join(dataDir, "server.log") });
    const readyS = round((performance.now() - t0) / 1000, 1);
    await sleep(3000);
    return {
      server_first_start_ready_s: readyS,
      server_first_start_peak_rss_mb: round(statusKb(server.pid, "VmHWM") / 1024, 0),
      server_first_start_rss_mb: round(statusKb(server.pid, "VmRSS") / 1024, 0),
    };
  } finally {
    if (server) await stopServer(server).catch(() => {});
    temp.remove();
  }
}

/** Webhook deliveries/s to a loopback receiver and event-to-delivery latency in the embedded runner (bench/webhooks.ts). */
async function benchWebhooksOn(kind: "pglite" | "postgres"): Promise<WebhookFigures | { error: string }> {
  const database = kind === "postgres" ? await createDatabase(pgBase, "gcs_bench_webhooks") : undefined;
  try {
    const f = await benchWebhooks({ url: database?.url }, log);
    log(`${kind} webhook_deliveries_per_second: ${f.webhook_deliveries_per_second} (target >= 500)`);
    log(`${kind} webhook_latency_p50_ms: ${f.webhook_latency_p50_ms}, p99: ${f.webhook_latency_p99_ms} (target p99 < 1000)`);
    return f;
  } catch (err) {
    log(`${kind} webhooks failed: ${err instanceof Error ? err.message : String(err)}`);
    return { error: err instanceof Error ? err.message : String(err) };
  } finally {
    await database?.drop().catch(() => {});
  }
}

/** `npm run bench -- two-processes`: one server process against two on one PostgreSQL database (bench/two-processes.ts). */
async function mainTwoProcesses() {
  await ensureBuild({ log });
  const loadStart = loadAvg();
  const f = await benchTwoProcesses(pgBase, log);
  console.log(`two-processes config: ${f.two_processes_config}`);
  console.log(`two-processes sends_per_second_one_process: ${f.sends_per_second_one_process}`);
  console.log(`two-processes sends_per_second_two_processes: ${f.sends_per_second_two_processes}`);
  console.log(`two-processes speedup: ${f.two_processes_speedup} (target >= 1.6)${f.two_processes_speedup >= 1.6 ? " ok" : " MISSED"}`);
  const machine = { cpus: os.cpus().length, node: process.version, load_avg_start: loadStart, load_avg_end: loadAvg() };
  console.log(`load average (1 min) at start ${loadStart}, at end ${machine.load_avg_end}: figures drop sharply when other work shares the CPUs`);
  console.log(JSON.stringify({ bench: "two-processes", machine, ...f }));
}

/** `npm run bench -- link [pglite|postgres]`: the public join link (bench/link.ts). */
async function mainLink(kind: string | undefined) {
  const kinds = (["pglite", "postgres"] as const).filter((k) => !kind || k === kind);
  if (kinds.length === 0) throw new Error(`unknown database "${kind}": pglite or postgres`);
  await ensureBuild({ log });
  const loadStart = loadAvg();
  const all = await benchLink([...kinds], pgBase, log);
  const machine = { cpus: os.cpus().length, node: process.version, load_avg_start: loadStart, load_avg_end: loadAvg() };
  console.log(`load average (1 min) at start ${loadStart}, at end ${machine.load_avg_end}: figures drop sharply when other work shares the CPUs`);
  console.log(JSON.stringify({ bench: "link", machine, ...all }));
}

async function main() {
  const only = process.argv[2];
  if (only === "two-processes") return mainTwoProcesses();
  if (only === "scale" || only === "load") {
    await ensureBuild({ log });
    return only === "scale" ? mainScale(process.argv.slice(3)) : mainLoad(process.argv.slice(3));
  }
  if (only === "link") return mainLink(process.argv[3]);
  if (only === "compare") return mainCompare(process.argv.slice(3));
  if (only === "exports") return benchExports();
  if (only === "group-actions") {
    await ensureBuild({ log });
    for (const kind of ["pglite", "postgres"] as const) if (!process.argv[3] || process.argv[3] === kind) await benchGroupActions(kind);
    return;
  }
  if (only === "moderation") {
    for (const kind of ["pglite", "postgres"] as const) if (!process.argv[3] || process.argv[3] === kind) await benchModeration(kind);
    return;
  }
  if (only === "participants") {
    for (const kind of ["pglite", "postgres"] as const) if (!process.argv[3] || process.argv[3] === kind) await benchParticipants(kind);
    return;
  }
  if (only === "audit") {
    // In process, one database at a time (its modules read DATA_DIR / DATABASE_URL when they load): PGlite by default.
    await benchAudit(process.argv[3] === "postgres" ? "postgres" : "pglite");
    return;
  }
  if (only === "two-numbers") {
    // In process, one database at a time (as audit): PGlite by default.
    await benchTwoNumbers(process.argv[3] === "postgres" ? "postgres" : "pglite");
    return;
  }
  const kinds = (["pglite", "postgres"] as const).filter((k) => !only || k === only);
  if (kinds.length === 0)
    throw new Error(
      `unknown mode "${only}": pglite, postgres, compare, two-processes, scale, load, link, participants, audit, two-numbers, moderation, group-actions or exports`,
    );
  const { built } = await ensureBuild({ log });
  if (built) {
    // Right after `next build` the first figures came out half as good (create-campaign 290 ms, not 190).
    log("a build just ran: 20 s for the machine to settle");
    await sleep(20_000);
  }
  const loadStart = loadAvg();
  const all: Record<string, Figures | { error: string }> = {};
  for (const kind of kinds) {
    log(`── ${kind} ──`);
    try {
      all[kind] = await benchOne(kind);
      if (kind === "pglite" && !dispatchOnly) Object.assign(all[kind], await benchFirstStart());
      report(kind, all[kind] as Figures);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`${kind} failed: ${message}`);
      all[kind] = { error: message };
    }
  }
  const webhooks: Record<string, WebhookFigures | { error: string }> = {};
  for (const kind of dispatchOnly ? [] : kinds) webhooks[kind] = await benchWebhooksOn(kind);
  const machine = { cpus: os.cpus().length, node: process.version, load_avg_start: loadStart, load_avg_end: loadAvg() };
  console.log(`load average (1 min) at start ${loadStart}, at end ${machine.load_avg_end}: figures drop sharply when other work shares the CPUs`);
  console.log(JSON.stringify({ bench: "dispatch", machine, ...all, webhooks }));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`[bench] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
