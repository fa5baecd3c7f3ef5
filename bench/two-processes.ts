/**
 * `npm run bench -- two-processes`: sends/s of one server process against two on one PostgreSQL
 * database, for many campaigns at once (docs/benchmarks.md). BENCH_TWO_TENANTS tenants (default 100,
 * more than one process's 48 workers), each with one BENCH_TWO_GROUPS-group campaign (200) at zero
 * pacing (20 messages per loop, BENCH_TWO_LATENCY_MS per message at the simulator, default 100: a
 * gateway's answer to a send), all created at once; from the first create request to the last campaign
 * completed. Each configuration runs once to warm up, then once measured. One campaign stays on one
 * worker at a time, so it is the number of campaigns, not their size, that two processes share.
 */
import path from "node:path";
import {
  apiClient,
  createDatabase,
  createTenant,
  freePort,
  root,
  startServer,
  stopServer,
  tempDataDir,
  type Api,
  type ServerProcess,
} from "../e2e/server-process";

const TENANTS = Number(process.env.BENCH_TWO_TENANTS ?? 100);
const GROUPS = Number(process.env.BENCH_TWO_GROUPS ?? 200);
const PER_LOOP = 20;
const LATENCY_MS = Number(process.env.BENCH_TWO_LATENCY_MS ?? 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export interface TwoProcessFigures {
  two_processes_config: string;
  sends_per_second_one_process: number;
  sends_per_second_two_processes: number;
  two_processes_speedup: number;
}

export async function benchTwoProcesses(pgBase: string, log: (line: string) => void): Promise<TwoProcessFigures> {
  const temp = tempDataDir("gcs-bench-two-");
  const database = await createDatabase(pgBase, "gcs_bench_two");
  const servers: ServerProcess[] = [];
  const { default: postgres } = await import("postgres");
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    const target = { dataDir: temp.dir, databaseUrl: database.url };
    const start = async (n: number) =>
      startServer({
        port: await freePort(),
        ...target,
        logFile: path.join(root, ".test-data", `bench-two-processes-${n}.log`),
        log: (line) => log(`two-processes: ${line}`),
        env: { SIMULATOR_GROUPS_PER_CHANNEL: String(GROUPS), RATE_LIMIT_API_KEY_PER_MINUTE: "1000000" },
      });
    servers.push(await start(1));
    // Tenants through the admin CLI, five at a time.
    const keys: string[] = [];
    for (let i = 0; i < TENANTS; i += 5) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(5, TENANTS - i) }, (_, j) =>
          createTenant({
            ...target,
            name: `Bench ${i + j}`,
            email: `bench-two-${i + j}-${Date.now().toString(36)}@example.com`,
            password: "senha-segura-bench-123",
          }),
        ),
      );
      keys.push(...batch.map((t) => t.api_key));
    }
    const tenants: { key: string; segment: string }[] = [];
    for (const key of keys) {
      const api = apiClient(() => servers[0].url, key);
      const channel = await api.post("/api/external/create-channel", { name: "Bench" });
      const groups = ((await api.get(`/api/external/list-groups/${channel.id_channel as string}`)).groups as { id_group: string }[]).map((g) => g.id_group);
      const segment = await api.post("/api/external/create-segment", { name: "Bench", id_channel: [channel.id_channel], groups });
      await api.patch("/api/external/edit-settings", {
        dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: PER_LOOP, min_campaign_interval: 0, max_campaign_interval: 0 },
        queue: { concurrent_mode: "enabled" },
      });
      await api.post("/api/simulator/latency", { ms: LATENCY_MS });
      tenants.push({ key, segment: segment.id_segment as string });
    }
    const config = `${TENANTS} tenants × one ${GROUPS}-group campaign, zero pacing, ${PER_LOOP} per loop, ${LATENCY_MS} ms per message at the simulator`;
    log(`two-processes: ${config}`);

    /** All campaigns at once (requests spread over the servers); sends/s from the first request to the last completed. */
    const runRound = async (label: string) => {
      const apis: Api[] = tenants.map((t, i) => apiClient(() => servers[i % servers.length].url, t.key));
      const t0 = performance.now();
      const ids = await Promise.all(
        tenants.map(
          async (t, i) =>
            (await apis[i].post("/api/external/create-campaign/message", { name: label, id_segment: t.segment, message: "Bench" })).id_campaign as string,
        ),
      );
      for (;;) {
        const [row] = await sql<{ done: number; sent: number }[]>`
          select count(*) filter (where status in ('completed', 'failed', 'canceled'))::int as done, coalesce(sum(sent), 0)::int as sent
            from campaigns where id = any(${ids})`;
        if (row.done === ids.length) {
          const seconds = (performance.now() - t0) / 1000;
          const perSecond = row.sent / seconds;
          log(`two-processes: ${label}: ${row.sent} sends in ${round(seconds, 2)} s = ${round(perSecond, 0)} sends/s`);
          return perSecond;
        }
        if (performance.now() - t0 > 300_000) throw new Error(`${label}: not finished in 300 s (${row.done}/${ids.length} campaigns, ${row.sent} sent)`);
        await sleep(100);
      }
    };
    await runRound("one process (warm-up)");
    const one = await runRound("one process");
    servers.push(await start(2));
    await runRound("two processes (warm-up)");
    const two = await runRound("two processes");
    return {
      two_processes_config: config,
      sends_per_second_one_process: round(one, 0),
      sends_per_second_two_processes: round(two, 0),
      two_processes_speedup: round(two / one, 2),
    };
  } finally {
    await sql.end({ timeout: 5 });
    for (const s of servers) await stopServer(s).catch(() => {});
    await database.drop().catch((err: Error) => log(`could not drop ${database.name}: ${err.message}`));
    temp.remove();
  }
}
