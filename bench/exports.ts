/**
 * `npm run bench -- exports`: server memory while a launch's leads are exported as CSV (docs/benchmarks.md#exports;
 * issue 32: flat in the number of rows, within 30 MB of idle). On PostgreSQL (a fresh database from BENCH_PG_URL /
 * DATABASE_URL, created and dropped here): BENCH_EXPORT_ROWS leads (default 200,000) written straight to the table,
 * then the server (test/child-server.ts: the REST facade on node:http, a process of its own, with the production
 * server's heap flags from boot/serve-args.ts) answers
 * `GET /api/external/launch-leads/{id}?format=csv` to a client that reads the stream and keeps only its byte count.
 * Prints the server's RSS (VmRSS of its process) idle after a warm-up, its highest during the export (sampled every
 * 50 ms), and 2 s after; then one JSON line.
 */
import { readFileSync } from "node:fs";
import { freshPostgresDatabase } from "./common";

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 200_000);

const rssMb = (pid: number) => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchExports() {
  const database = await freshPostgresDatabase("gcs_bench_exports");
  Object.assign(process.env, { MESSAGING_PROVIDER: "simulator", SIMULATOR_PAIRING_MS: "0" });
  let child: { pid: number; close(): Promise<void> } | undefined;
  try {
    // Loaded after the environment is set: the modules read it when they load (this process migrates the database).
    const { serverDb } = await import("../server/database");
    const { sql } = await import("drizzle-orm");
    const { startTestServer } = await import("../test/http-server");
    const { startChildServer } = await import("../test/child-server");
    const { launchWithGroups } = await import("../test/launches/fixtures");
    const db = await serverDb();
    // The fixtures make the tenant, channel and launch through a server; this process's own serves them.
    const local = await startTestServer();
    const l = await launchWithGroups(local.url, { groups: 1 });
    await local.close();
    await db.execute(
      sql`insert into launch_leads (launch_id, phone, match_key, name, email, source)
          select ${l.id}, p, p, 'Pessoa ' || g, 'pessoa' || g || '@example.com', 'form-aula-1'
          from (select g, '5531' || lpad(g::text, 9, '0') as p from generate_series(1, ${ROWS}) g) s`,
    );
    // As autovacuum would after such an insert: the planner learns the table's size (else it sorts it for every page).
    await db.execute(sql`analyze launch_leads`);
    // The server process runs with the production server's heap flags (boot/serve-args.ts), as `npm start` runs it.
    const { heapFlags } = await import("../boot/serve-args");
    process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS ?? "", ...heapFlags.map((f) => `${f.option}=${f.value}`)].join(" ").trim();
    const server = await startChildServer("127.0.0.1");
    child = server;
    const csvUrl = `${server.url}/api/external/launch-leads/${l.id}?format=csv`;
    const headers = { "x-api-key": l.api.key };
    // Warm-up: the route, the database pool and the JIT, on a JSON page and a small part of the CSV.
    for (let i = 0; i < 3; i++) await (await fetch(`${server.url}/api/external/launch-leads/${l.id}?format=json`, { headers })).text();
    await sleep(2000);
    const idle = rssMb(server.pid);
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(server.pid));
    }, 50);
    const started = Date.now();
    const res = await fetch(csvUrl, { headers });
    let bytes = 0;
    let lines = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      for (const b of chunk) if (b === 10) lines++;
    }
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(server.pid));
    await sleep(2000);
    const after = rssMb(server.pid);
    const figures = {
      rows: ROWS,
      csv_lines: lines,
      csv_mb: Math.round((bytes / 1048576) * 10) / 10,
      export_seconds: Math.round(seconds * 10) / 10,
      server_rss_idle_mb: idle,
      server_rss_peak_during_mb: peak,
      server_rss_after_mb: after,
      peak_over_idle_mb: Math.round((peak - idle) * 10) / 10,
    };
    console.log(`rows ${ROWS}, CSV ${figures.csv_mb} MB (${lines} lines) in ${figures.export_seconds} s`);
    console.log(`server RSS idle ${idle} MB, peak during the export ${peak} MB (+${figures.peak_over_idle_mb} MB, target < 30), 2 s after ${after} MB`);
    console.log(JSON.stringify(figures));
    if (lines !== ROWS + 1) throw new Error(`the CSV has ${lines} lines, not ${ROWS + 1}`);
  } finally {
    await child?.close();
    await (await (await import("../server/database")).serverDatabase()).close().catch(() => {});
    await database.drop();
  }
}
