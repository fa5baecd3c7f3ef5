/**
 * `npm run bench -- link [pglite|postgres]`: the launches' public join link GET /g/{slug} on the real
 * server (.next/serve.cjs), at a steady 200 requests/s (docs/decisions.md#launches: p99 < 20 ms).
 *
 * A launch is written into the database before the server starts (group 1 full, group 2 filling), the
 * server runs with TRUST_PROXY=1 and every request carries X-Forwarded-For from a pool of 2,000 addresses
 * (distinct visitors). A paced, open-loop client (node:http, keep-alive agent) sends one request every
 * 5 ms whatever is still in flight; latency is counted from the instant a request was due (so a stall of
 * the server is not hidden by the client waiting), and also from when it was written (`service_*`).
 * After the run the clicks stored are counted: every counted visit must be in launch_clicks and in the
 * group's `clicks` (nothing buffered, nothing lost).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { createDatabase, createTenant, freePort, root, startServer, stopServer, tempDataDir, withDatabase, type ServerProcess } from "../e2e/server-process";

const RATE = Number(process.env.BENCH_LINK_RATE ?? 200);
const WARMUP_S = Number(process.env.BENCH_LINK_WARMUP_S ?? 3);
const SECONDS = Number(process.env.BENCH_LINK_SECONDS ?? 30);
const VISITORS = 2000;
const browser =
  "Mozilla/5.0 (Linux; Android 14; SM-A546E) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 Instagram 330.0.0.40.92";

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
function quantile(values: number[], q: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

export interface LinkFigures {
  link_rate_per_second: number;
  link_requests: number;
  link_p50_ms: number;
  link_p90_ms: number;
  link_p99_ms: number;
  link_max_ms: number;
  link_service_p50_ms: number;
  link_service_p99_ms: number;
  link_achieved_rate: number;
  link_errors: number;
  /** The server's CPU time per request over the measured run (user + system). */
  link_server_cpu_ms_per_request: number;
  /** The same without the server's idle background CPU (measured over 5 s before the run). */
  link_server_cpu_net_ms_per_request: number;
  link_server_idle_cpu_ms_per_s: number;
  link_clicks_sent: number;
  link_clicks_stored: number;
  link_group_clicks: number;
  link_unique_visitors: number;
}

/** CPU time (user + system) the process has used, ms: a figure the other work on the machine does not inflate the way it does latency. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

async function seedLaunch(query: Query, tenantId: string) {
  const channelId = `channel_${randomUUID()}`;
  const segmentId = `segment_${randomUUID()}`;
  const launchId = `launch_${randomUUID()}`;
  const slug = `bench-${randomUUID().slice(0, 8)}`;
  await query("insert into channels (id, tenant_id, name, status, provider_ref) values ($1, $2, 'Bench', 'connected', $1)", [channelId, tenantId]);
  await query("insert into segments (id, tenant_id, name) values ($1, $2, 'Bench launch')", [segmentId, tenantId]);
  await query(
    `insert into launches (id, tenant_id, name, slug, segment_id, channel_ids, group_template, capacity, margin)
     values ($1, $2, 'Bench launch', $3, $4, $5::jsonb, $6::jsonb, 1024, 24)`,
    [launchId, tenantId, slug, segmentId, JSON.stringify([channelId]), JSON.stringify({ name: "Bench #{n}", admins_only: true, admins: [] })],
  );
  const invite = (n: number) => `https://chat.whatsapp.com/bench${n}`;
  await query(
    `insert into launch_groups (launch_id, position, id_group, channel_id, name, invite_url, members, status) values
     ($1, 1, '120363000000000001@g.us', $2, 'Bench #1', $3, 1000, 'full'),
     ($1, 2, '120363000000000002@g.us', $2, 'Bench #2', $4, 10, 'filling'),
     ($1, 3, '120363000000000003@g.us', $2, 'Bench #3', $5, 0, 'reserve')`,
    [launchId, channelId, invite(1), invite(2), invite(3)],
  );
  return { launchId, slug, expected: invite(2) };
}

/** An open-loop client: `rate` requests/s for `seconds`, on a keep-alive agent. */
async function paced(url: string, expected: string, rate: number, seconds: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const fromDue: number[] = [];
  const service: number[] = [];
  let errors = 0;
  let sent = 0;
  const inFlight: Promise<void>[] = [];
  const start = performance.now() + 50;
  const one = (i: number, due: number) =>
    new Promise<void>((resolve) => {
      const written = performance.now();
      const req = http.get(
        url,
        { agent, headers: { "user-agent": browser, "x-forwarded-for": `10.77.${(i % VISITORS) >> 8}.${(i % VISITORS) & 255}` } },
        (res) => {
          res.resume();
          res.on("end", () => {
            const end = performance.now();
            if (res.statusCode !== 302 || res.headers.location !== expected) errors++;
            fromDue.push(end - due);
            service.push(end - written);
            resolve();
          });
        },
      );
      req.on("error", () => {
        errors++;
        resolve();
      });
    });
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    while (performance.now() < due) {
      // the last half millisecond: spin, setTimeout is too coarse for 5 ms steps
    }
    inFlight.push(one(i, due));
    sent++;
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  return { fromDue, service, errors, sent, achieved: sent / elapsed };
}

async function benchLinkOn(kind: "pglite" | "postgres", pgBase: string, log: (line: string) => void): Promise<LinkFigures> {
  const temp = tempDataDir("gcs-bench-link-");
  const database = kind === "postgres" ? await createDatabase(pgBase, "gcs_bench_link") : undefined;
  const target = { dataDir: temp.dir, databaseUrl: database?.url };
  let server: ServerProcess | undefined;
  try {
    const tenant = await createTenant({
      ...target,
      name: "Bench",
      email: `bench-link-${Date.now().toString(36)}@example.com`,
      password: "senha-segura-bench-123",
    });
    const launch = await withDatabase(target, (query) => seedLaunch(query, tenant.tenant_id));
    server = await startServer({
      port: await freePort(),
      ...target,
      logFile: path.join(root, ".test-data", `bench-link-${kind}.log`),
      log: (line) => log(`${kind}: ${line}`),
      env: { TRUST_PROXY: "1" },
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the server, written when it stops. BENCH_NODE_ARGS: more Node
      // flags for the server, e.g. "--trace-gc-nvp" (each collection, its pause and the bytes allocated since the
      // last, in the server's log).
      nodeArgs: [
        ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []),
        ...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      ],
    });
    const url = `${server.url}/g/${launch.slug}`;
    const warm = await paced(url, launch.expected, RATE, WARMUP_S);
    log(`${kind}: warm-up ${warm.sent} requests, ${warm.errors} errors`);
    // The server's own background work (engines' polls) over 5 idle seconds, subtracted below.
    const idle0 = cpuMs(server.pid);
    await new Promise((r) => setTimeout(r, 5000));
    const idlePerS = (cpuMs(server.pid) - idle0) / 5;
    const cpu0 = cpuMs(server.pid);
    const t0 = performance.now();
    const run = await paced(url, launch.expected, RATE, SECONDS);
    const runS = (performance.now() - t0) / 1000;
    const cpuTotal = cpuMs(server.pid) - cpu0;
    const cpu = cpuTotal / run.sent;
    const cpuNet = Math.max(0, cpuTotal - idlePerS * runS) / run.sent;
    log(`${kind}: ${run.sent} requests at ${round(run.achieved, 1)}/s, ${run.errors} errors`);
    await stopServer(server);
    server = undefined;
    const counts = await withDatabase(target, async (query) => {
      const [c] = await query(
        "select count(*)::int as clicks, count(distinct visitor)::int as visitors from launch_clicks where launch_id = $1 and position = 2",
        [launch.launchId],
      );
      const [g] = await query("select clicks from launch_groups where launch_id = $1 and position = 2", [launch.launchId]);
      return { clicks: Number(c?.clicks), visitors: Number(c?.visitors), group: Number(g?.clicks) };
    });
    return {
      link_rate_per_second: RATE,
      link_requests: run.sent,
      link_p50_ms: round(quantile(run.fromDue, 0.5)),
      link_p90_ms: round(quantile(run.fromDue, 0.9)),
      link_p99_ms: round(quantile(run.fromDue, 0.99)),
      link_max_ms: round(Math.max(...run.fromDue)),
      link_service_p50_ms: round(quantile(run.service, 0.5)),
      link_service_p99_ms: round(quantile(run.service, 0.99)),
      link_achieved_rate: round(run.achieved, 1),
      link_errors: warm.errors + run.errors,
      link_server_cpu_ms_per_request: round(cpu, 3),
      link_server_cpu_net_ms_per_request: round(cpuNet, 3),
      link_server_idle_cpu_ms_per_s: round(idlePerS, 1),
      link_clicks_sent: warm.sent + run.sent - warm.errors - run.errors,
      link_clicks_stored: counts.clicks,
      link_group_clicks: counts.group,
      link_unique_visitors: counts.visitors,
    };
  } finally {
    if (server) await stopServer(server).catch(() => {});
    await database?.drop().catch(() => {});
    temp.remove();
  }
}

/** Runs the link bench on each kind and prints each figure with its target. */
export async function benchLink(kinds: ("pglite" | "postgres")[], pgBase: string, log: (line: string) => void) {
  const all: Record<string, LinkFigures | { error: string }> = {};
  for (const kind of kinds) {
    log(`── link ${kind} ──`);
    try {
      const f = await benchLinkOn(kind, pgBase, log);
      all[kind] = f;
      const ok = f.link_p99_ms < 20 ? " ok" : " MISSED";
      console.log(`${kind} link_p99_ms: ${f.link_p99_ms} (target < 20)${ok}`);
      console.log(
        `${kind} link_p50_ms: ${f.link_p50_ms}, p90 ${f.link_p90_ms}, max ${f.link_max_ms}; service p50 ${f.link_service_p50_ms}, p99 ${f.link_service_p99_ms}; ` +
          `server CPU per request ${f.link_server_cpu_ms_per_request} ms (${f.link_server_cpu_net_ms_per_request} ms without its idle ${f.link_server_idle_cpu_ms_per_s} ms/s)`,
      );
      const lost = f.link_clicks_sent - f.link_clicks_stored;
      console.log(
        `${kind} link_clicks: sent ${f.link_clicks_sent}, stored ${f.link_clicks_stored}, group counter ${f.link_group_clicks}, unique visitors ${f.link_unique_visitors}` +
          (lost === 0 && f.link_group_clicks === f.link_clicks_stored ? " ok" : " MISMATCH"),
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`link ${kind} failed: ${message}`);
      all[kind] = { error: message };
    }
  }
  return all;
}
