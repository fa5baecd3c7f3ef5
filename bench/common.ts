/**
 * Shared by `npm run bench -- scale | load` and `npm run proof`: a server on a fresh database (PostgreSQL
 * beside DATABASE_URL/BENCH_PG_URL, or PGlite in a temporary DATA_DIR), tenants made in bulk, the server's
 * CPU time and RSS from /proc, quantiles, and a bounded-concurrency map.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createDatabase, freePort, root, serverEnv, startServer, stopServer, tempDataDir, type ServerProcess } from "../e2e/server-process";

export type DbKind = "pglite" | "postgres";
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export function quantile(values: number[], q: number) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** `--name value` from argv, else the environment variable, else the default. */
export function option(args: string[], name: string, envName: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  if (i >= 0 && args[i + 1] !== undefined) return args[i + 1];
  const eq = args.find((a) => a.startsWith(`--${name}=`));
  if (eq) return eq.slice(name.length + 3);
  return process.env[envName] ?? fallback;
}

/** PostgreSQL when DATABASE_URL (or BENCH_PG_URL) is set, unless `--db` says otherwise. */
export function dbKind(args: string[]): DbKind {
  const kind = option(args, "db", "BENCH_DB", process.env.DATABASE_URL || process.env.BENCH_PG_URL ? "postgres" : "pglite");
  if (kind !== "pglite" && kind !== "postgres") throw new Error(`--db must be pglite or postgres, got ${kind}`);
  return kind;
}

export const pgBase = () => process.env.BENCH_PG_URL ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** Runs `fn` over `items`, at most `limit` at a time, results in order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i], i);
    }),
  );
  return out;
}

const clockTicks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** The processes of a process group (the server, and PGlite's initdb child at a first start), read from /proc. */
export function groupPids(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid pgrp …: comm may hold spaces, so split after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat (fields 14 and 15). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return 0;
  }
}

function rssKb(pid: number): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The server's CPU time and peak RSS (sampled every 200 ms) from `start()` to `stop()`. */
export function serverMeter(servers: () => ServerProcess[]) {
  let cpu0 = 0;
  let t0 = 0;
  let peakKb = 0;
  let timer: NodeJS.Timeout | undefined;
  const cpuNow = () => servers().reduce((sum, s) => sum + groupPids(s.pid).reduce((a, pid) => a + cpuSeconds(pid), 0), 0);
  const sample = () => {
    for (const s of servers())
      peakKb = Math.max(
        peakKb,
        groupPids(s.pid).reduce((a, pid) => a + rssKb(pid), 0),
      );
  };
  return {
    start() {
      cpu0 = cpuNow();
      t0 = performance.now();
      peakKb = 0;
      sample();
      timer = setInterval(sample, 200);
    },
    /** CPU seconds since start, CPU share of one core over the wall time, peak RSS (MB). */
    stop() {
      sample();
      clearInterval(timer);
      const cpu = cpuNow() - cpu0;
      const wall = (performance.now() - t0) / 1000;
      return { cpu_s: round(cpu, 1), cpu_percent: round((100 * cpu) / wall, 0), rss_peak_mb: round(peakKb / 1024, 0), wall_s: round(wall, 1) };
    },
  };
}

export interface Target {
  kind: DbKind;
  dataDir: string;
  databaseUrl?: string;
  cleanup(): Promise<void>;
}

/** A fresh database: PostgreSQL beside pgBase(), or PGlite in a temporary DATA_DIR. */
export async function freshTarget(kind: DbKind, prefix: string, log: (line: string) => void): Promise<Target> {
  const temp = tempDataDir(`gcs-${prefix}-`);
  const database = kind === "postgres" ? await createDatabase(pgBase(), `gcs_${prefix}`) : undefined;
  if (database) log(`postgres: fresh database ${database.name}`);
  return {
    kind,
    dataDir: temp.dir,
    databaseUrl: database?.url,
    async cleanup() {
      if (database) await database.drop().catch((err: Error) => log(`could not drop ${database.name}: ${err.message}`));
      temp.remove();
    },
  };
}

/** `count` tenants in one process (bench/make-tenants.ts); on PGlite before the server starts. */
export async function makeTenants(target: Target, count: number, prefix: string): Promise<{ tenant_id: string; api_key: string }[]> {
  const env = serverEnv({ port: 0, dataDir: target.dataDir, databaseUrl: target.databaseUrl, logFile: "" });
  delete env.PORT;
  // Throwaway accounts: cheap password hashes (scrypt N=2^10 instead of 2^17, about 1 s of CPU each on a
  // busy machine). Only NODE_ENV=test reads PASSWORD_SCRYPT_N_FOR_TESTS; the hash records its N, so the
  // server verifies it all the same.
  Object.assign(env, { NODE_ENV: "test" });
  env.PASSWORD_SCRYPT_N_FOR_TESTS = "1024";
  const child = spawn(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "bench/make-tenants.ts", String(count), prefix], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  const line = stdout.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("[")) throw new Error(`make-tenants failed (${code}): ${stderr.trim() || stdout.trim()}`);
  return JSON.parse(line);
}

/** The production server on the target, with the bench's environment. */
export async function startBenchServer(target: Target, name: string, env: Record<string, string>, log: (line: string) => void) {
  return startServer({
    port: await freePort(),
    dataDir: target.dataDir,
    databaseUrl: target.databaseUrl,
    logFile: path.join(root, ".test-data", `bench-${name}-${target.kind}.log`),
    log: (line) => log(line),
    env,
    // BENCH_CPU_PROF=<dir>: a V8 CPU profile of the server, written when it stops.
    nodeArgs: process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [],
  });
}

export { stopServer, type ServerProcess };

/**
 * BENCH_STATEMENTS=1: the server counts the statements it runs, by text (DB_STATEMENT_LOG, db/client.ts).
 * `env` goes into the server's environment; `mark()` notes the counts at the start of the measured part,
 * `report(messages)` prints the statements run since, per message sent and the most frequent texts.
 */
export function statementLog(name: string) {
  const file = path.join(root, ".test-data", `bench-${name}-statements.json`);
  const on = Boolean(process.env.BENCH_STATEMENTS);
  const read = (): Record<string, number> => {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
    } catch {
      return {};
    }
  };
  let base: Record<string, number> = {};
  return {
    env: on ? { DB_STATEMENT_LOG: file } : ({} as Record<string, string>),
    mark() {
      if (on) base = read();
    },
    /**
     * Statements run since mark() (null when not counting), the background's included (the runner's ticks, the
     * outbox): `top` lists the most frequent texts, so an operation's own can be told from them.
     */
    async since(): Promise<{ total: number; top: [text: string, n: number][]; all: [text: string, n: number][] } | null> {
      if (!on) return null;
      await sleep(1500); // the server writes its counts once a second
      const now = read();
      const rows = Object.entries(now)
        .map(([text, n]) => [text, n - (base[text] ?? 0)] as [string, number])
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1]);
      return { total: rows.reduce((sum, [, n]) => sum + n, 0), top: rows.slice(0, 8), all: rows };
    },
    async report(messages: number) {
      if (!on) return;
      await sleep(1500); // the server writes its counts once a second
      const now = read();
      const rows = Object.entries(now)
        .map(([text, n]) => [text, n - (base[text] ?? 0)] as const)
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1]);
      const total = rows.reduce((sum, [, n]) => sum + n, 0);
      console.log(`[statements] ${total} statements for ${messages} messages: ${round(total / Math.max(1, messages), 2)} per message`);
      printTable([
        ["per message", "count", "statement"],
        ...rows.slice(0, 25).map(([text, n]) => [round(n / Math.max(1, messages), 3), n, text.slice(0, 150)]),
      ]);
    },
  };
}

/** Prints rows as one aligned table (first row: the header). */
export function printTable(rows: (string | number)[][]) {
  const cells = rows.map((r) => r.map(String));
  const widths = cells[0].map((_, c) => Math.max(...cells.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) => `| ${r.map((v, c) => v.padEnd(widths[c])).join(" | ")} |`;
  console.log(line(cells[0]));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of cells.slice(1)) console.log(line(r));
}

/**
 * In-process benches (participants, exports): a fresh PostgreSQL database beside BENCH_PG_URL / DATABASE_URL, set as
 * this process's DATABASE_URL (the server's modules read it when they load); `drop` removes it.
 */
export async function freshPostgresDatabase(prefix: string): Promise<{ drop(): Promise<void> }> {
  const base = process.env.BENCH_PG_URL ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `${prefix}_${process.pid}`;
  const postgres = (await import("postgres")).default;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  process.env.DATABASE_URL = url.toString();
  return {
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
