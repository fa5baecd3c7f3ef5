/**
 * `npm run bench -- load [--db pglite|postgres] [--keys 100] [--duration 60]`: HTTP load on the real
 * server with autocannon (docs/benchmarks.md#load). `keys` tenants, each with its own API key, a channel,
 * a 5-group segment and one campaign scheduled two days ahead; then for `duration` seconds, at once, one
 * autocannon per route: GET info-campaign, GET list-groups, GET list-settings, POST create-campaign/message
 * (scheduled, with an Idempotency-Key; every second request of a tenant repeats the previous key and
 * body: a replay), each request on the next key in turn, together at the rate limit's ceiling
 * (RATE_LIMIT_API_KEY_PER_MINUTE, default 300 a minute per key: 4 routes × keys × 300/60/4 requests per
 * second); and GET /api/openapi.json at the rate of one API route, as the static reference. Prints p50/p99
 * and status codes per route, and the server's CPU and peak RSS; 429 is expected at the ceiling, anything
 * else that is not 2xx (5xx above all) is an error, counted and printed.
 */
import os from "node:os";
import autocannon from "autocannon";
import { apiClient } from "../e2e/server-process";
import {
  dbKind,
  freshTarget,
  makeTenants,
  mapLimit,
  option,
  printTable,
  round,
  serverMeter,
  startBenchServer,
  stopServer,
  type DbKind,
  type ServerProcess,
} from "./common";

export interface LoadOptions {
  kind: DbKind;
  keys: number;
  durationS: number;
  /** Share of the rate limit's ceiling to send (1: at it). */
  rateFactor: number;
}

export interface RouteFigures {
  route: string;
  requests: number;
  per_second: number;
  p50_ms: number;
  p99_ms: number;
  statuses: Record<string, number>;
  errors: number;
}

export interface LoadFigures {
  db: DbKind;
  keys: number;
  duration_s: number;
  routes: RouteFigures[];
  non_429_errors: number;
  server_cpu_percent: number;
  server_rss_peak_mb: number;
  load_avg: number;
}

const log = (line: string) => console.log(`[load] ${line}`);
const PER_MINUTE = Number(process.env.RATE_LIMIT_API_KEY_PER_MINUTE ?? 300);

export function loadOptions(args: string[]): LoadOptions {
  return {
    kind: dbKind(args),
    keys: Number(option(args, "keys", "LOAD_KEYS", "100")),
    durationS: Number(option(args, "duration", "LOAD_DURATION_S", "60")),
    rateFactor: Number(option(args, "rate-factor", "LOAD_RATE_FACTOR", "1")),
  };
}

/** DD/MM/YYYY - HH:mm in Brasília (UTC-3), two days from now. */
function inTwoDays() {
  const d = new Date(Date.now() + 2 * 86_400_000 - 3 * 3_600_000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getUTCDate())}/${p(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} - ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

export async function runLoad(o: LoadOptions): Promise<LoadFigures> {
  const target = await freshTarget(o.kind, "load", log);
  let server: ServerProcess | undefined;
  try {
    const keys = await makeTenants(target, o.keys, "load");
    server = await startBenchServer(target, "load", { SIMULATOR_GROUPS_PER_CHANNEL: "20" }, log);
    const url = server.url;
    const scheduledAt = inTwoDays();
    const tenants = await mapLimit(keys, 10, async (k) => {
      const api = apiClient(() => url, k.api_key);
      const ch = await api.post("/api/external/create-channel", { name: "Load" });
      const groups = ((await api.get(`/api/external/list-groups/${ch.id_channel as string}`)).groups as { id_group: string }[])
        .slice(0, 5)
        .map((g) => g.id_group);
      const segment = (await api.post("/api/external/create-segment", { name: "Load", id_channel: [ch.id_channel], groups })).id_segment as string;
      const campaign = (
        await api.post("/api/external/create-campaign/message", { name: "Load", id_segment: segment, message: "Olá", scheduled_at: scheduledAt })
      ).id_campaign as string;
      return { key: k.api_key, channel: ch.id_channel as string, segment, campaign, creates: 0 };
    });
    log(`${tenants.length} tenants ready; ${o.durationS} s of load`);

    // Each route's share of every key's budget: the four API routes together at the ceiling.
    const perRoute = Math.max(1, Math.round(((o.keys * PER_MINUTE) / 60 / 4) * o.rateFactor));
    const run = Date.now().toString(36);
    const rotating = (build: (t: (typeof tenants)[number]) => { path: string; method?: string; body?: string; headers?: Record<string, string> }) => {
      let n = 0;
      return (req: Record<string, unknown>) => {
        const t = tenants[n++ % tenants.length];
        const r = build(t);
        return {
          ...req,
          method: r.method ?? "GET",
          path: r.path,
          body: r.body,
          headers: { ...(req.headers as Record<string, string>), "x-api-key": t.key, ...(r.body ? { "content-type": "application/json" } : {}), ...r.headers },
        };
      };
    };
    const routes: { route: string; rate: number; setup?: ReturnType<typeof rotating> }[] = [
      { route: "GET info-campaign", rate: perRoute, setup: rotating((t) => ({ path: `/api/external/info-campaign/${t.campaign}` })) },
      { route: "GET list-groups", rate: perRoute, setup: rotating((t) => ({ path: `/api/external/list-groups/${t.channel}` })) },
      { route: "GET list-settings", rate: perRoute, setup: rotating(() => ({ path: "/api/external/list-settings" })) },
      {
        route: "POST create-campaign",
        rate: perRoute,
        setup: rotating((t) => {
          // Requests 2k and 2k+1 of a tenant share key and body: the second is a replay.
          const k = Math.floor(t.creates++ / 2);
          return {
            method: "POST",
            path: "/api/external/create-campaign/message",
            body: JSON.stringify({ name: `Load ${k}`, id_segment: t.segment, message: "Olá", scheduled_at: scheduledAt }),
            headers: { "idempotency-key": `load-${run}-${k}` },
          };
        }),
      },
      { route: "GET /api/openapi.json (static)", rate: perRoute },
    ];
    const meter = serverMeter(() => (server ? [server] : []));
    meter.start();
    const results = await Promise.all(
      routes.map((r) =>
        autocannon({
          url,
          connections: 8,
          duration: o.durationS,
          overallRate: r.rate,
          timeout: 30,
          requests: [r.setup ? { setupRequest: r.setup as never } : { method: "GET", path: "/api/openapi.json" }],
        }),
      ),
    );
    const cpu = meter.stop();
    const figures: RouteFigures[] = results.map((res, i) => {
      const statuses: Record<string, number> = {};
      for (const [code, v] of Object.entries((res as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {})) {
        statuses[code] = v.count;
      }
      const bad = Object.entries(statuses).reduce((sum, [code, n]) => (code.startsWith("2") || code === "429" ? sum : sum + n), 0);
      return {
        route: routes[i].route,
        requests: res.requests.total,
        per_second: round(res.requests.average, 0),
        p50_ms: res.latency.p50,
        p99_ms: res.latency.p99,
        statuses,
        errors: bad + res.errors + res.timeouts,
      };
    });
    return {
      db: o.kind,
      keys: o.keys,
      duration_s: o.durationS,
      routes: figures,
      non_429_errors: figures.reduce((s, f) => s + f.errors, 0),
      server_cpu_percent: cpu.cpu_percent,
      server_rss_peak_mb: cpu.rss_peak_mb,
      load_avg: round(os.loadavg()[0], 1),
    };
  } finally {
    if (server) await stopServer(server).catch(() => {});
    await target.cleanup();
  }
}

export function printLoad(f: LoadFigures) {
  printTable([
    ["route", "requests", "req/s", "p50 ms", "p99 ms", "status codes", "errors (not 2xx/429)"],
    ...f.routes.map((r) => [
      r.route,
      r.requests,
      r.per_second,
      r.p50_ms,
      r.p99_ms,
      Object.entries(r.statuses)
        .map(([c, n]) => `${c}: ${n}`)
        .join(", "),
      r.errors,
    ]),
  ]);
  console.log(
    `${f.db}, ${f.keys} API keys, ${f.duration_s} s: server CPU ${f.server_cpu_percent} % of a core, peak RSS ${f.server_rss_peak_mb} MB, load average ${f.load_avg}; ` +
      `errors other than 429: ${f.non_429_errors}${f.non_429_errors === 0 ? " ok" : " MISSED (target 0)"}`,
  );
}

export async function mainLoad(args: string[]) {
  const o = loadOptions(args);
  log(`options: ${JSON.stringify(o)}`);
  const f = await runLoad(o);
  printLoad(f);
  console.log(JSON.stringify({ bench: "load", ...f }));
}
