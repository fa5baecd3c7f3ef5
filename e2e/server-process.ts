/**
 * Server processes for the browser suite, the crash test and the bench: the production server
 * (.next/serve.cjs, as `npm start` runs it) in its own process
 * group on a free port with its own DATA_DIR (PGlite) or a database of its own, the admin CLI, direct SQL
 * on the service's database, and a small JSON client. Every server started here dies with this process.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { acquireDataDirLock, releaseDataDirLock } from "../db/data-dir-lock";
import { serverArgs } from "../boot/serve-args";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ───────────────────────────── server processes ─────────────────────────────

export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
      .once("error", () => resolve(false))
      .once("listening", () => probe.close(() => resolve(true)));
    probe.listen(port, "127.0.0.1");
  });
}

/**
 * A free port in [from, from + 1000): the e2e runner's server takes 3100–3999 (never 3000, where a
 * developer's own server usually runs), the crash test and the bench 4000–4999.
 */
/** The Fetch standard's bad ports (https://fetch.spec.whatwg.org/#port-blocking): 4190 in 4000–4999 failed a CI run. */
const fetchBadPorts = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export async function freePort(from = 4000): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = from + Math.floor(Math.random() * 1000);
    // fetch (undici, like browsers) refuses the spec's "bad ports" with a bare TypeError: a server there never answers.
    if (!fetchBadPorts.has(port) && (await portIsFree(port))) return port;
  }
  throw new Error(`no free port between ${from} and ${from + 999}`);
}

export interface ServerOptions {
  port: number;
  /** Secrets, and the PGlite database when there is no databaseUrl. */
  dataDir: string;
  /** PostgreSQL; absent: embedded PGlite under dataDir (DATABASE_URL is removed from the environment). */
  databaseUrl?: string;
  /** Extra environment (SIMULATOR_GROUPS_PER_CHANNEL, rate limits…). */
  env?: Record<string, string>;
  /** Variables removed from the server's environment, e.g. ["APP_URL", "NEXTAUTH_URL"] to run with the defaults. */
  unsetEnv?: string[];
  /** Appended to: every lifetime of the server in one file. */
  logFile: string;
  log?: (line: string) => void;
  readyTimeoutMs?: number;
  /** Node flags for the server process, e.g. ["--cpu-prof"] (NODE_OPTIONS refuses some). */
  nodeArgs?: string[];
  /**
   * Start it as `npm start` does: scripts/start.ts (the launcher) spawns the server as its child and exits
   * when it exits. `child` is then the launcher and `pid` the server's. Absent: this process spawns the server.
   */
  viaStart?: boolean;
}

export interface ServerProcess {
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  opts: ServerOptions;
}

/** The launcher (scripts/start.ts) run by Node with tsx's loader: one process, the server its only child. */
const startScriptArgs = ["--import", "tsx", path.join(root, "scripts/start.ts")];

/** The first child of `pid` (Linux: /proc), or undefined while it has none. */
function childPid(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ")[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/** Every server started here and not yet seen exiting: killed when this process exits, whatever the path. */
const live = new Set<ChildProcess>();
/** Synchronous last-resort cleanups (temp dirs, databases) for an exit that skips `finally` blocks. */
const lastResort = new Set<() => void>();

/** Registers a synchronous cleanup run if the process exits or is signalled first; returns its remover. */
export function onAbnormalExit(fn: () => void): () => void {
  installExitHook();
  lastResort.add(fn);
  return () => lastResort.delete(fn);
}

/** A temporary directory (a DATA_DIR) that `remove()` deletes, or at the latest an abnormal exit of this process. */
export function tempDataDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const forget = onAbnormalExit(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    remove() {
      rmSync(dir, { recursive: true, force: true });
      forget();
    },
  };
}

function emergencyCleanup() {
  for (const child of live) signalGroup(child, "SIGKILL");
  live.clear();
  for (const fn of lastResort) {
    try {
      fn();
    } catch {
      // best effort
    }
  }
  lastResort.clear();
}

let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", emergencyCleanup);
  // A signal kills a process that has no listener without running "exit" handlers, and a listener
  // that merely uses `once` leaves the second Ctrl-C (the terminal signals the whole group, tsx relays
  // it again) to the default action. So: clean up on every signal; when nobody else listened for it
  // (bench), die by it afterwards; otherwise (the e2e runner stops its own server) leave the exit to them.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const othersHandleIt = process.listenerCount(signal) > 0;
    const onSignal = () => {
      emergencyCleanup();
      if (!othersHandleIt) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal); // the process group created by detached: true
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Whether `child` exited within `ms`. */
export function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export function serverEnv(opts: ServerOptions): NodeJS.ProcessEnv {
  const url = `http://127.0.0.1:${opts.port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(opts.port),
    APP_URL: url,
    NEXTAUTH_URL: url,
    SIMULATOR_PAIRING_MS: "0",
    DATA_DIR: opts.dataDir,
    ...opts.env,
  };
  if (opts.databaseUrl) env.DATABASE_URL = opts.databaseUrl;
  else delete env.DATABASE_URL;
  for (const name of opts.unsetEnv ?? []) delete env[name];
  return env;
}

/** The production server (scripts/serve.ts, as `npm start` runs it) in its own process group; resolves once /login answers. */
export async function startServer(opts: ServerOptions): Promise<ServerProcess> {
  installExitHook();
  mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = createWriteStream(opts.logFile, { flags: "a" });
  out.write(`\n──── server start ${new Date().toISOString()} port ${opts.port} ────\n`);
  const args = opts.viaStart ? startScriptArgs : serverArgs({ port: opts.port, hostname: "127.0.0.1", nodeArgs: opts.nodeArgs });
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: serverEnv(opts),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child);
  child.once("exit", () => live.delete(child));
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  child.once("close", () => out.end());
  const server: ServerProcess = { url: `http://127.0.0.1:${opts.port}`, port: opts.port, pid: child.pid!, child, opts };
  const t0 = Date.now();
  const deadline = t0 + (opts.readyTimeoutMs ?? 90_000);
  // What /login last answered, so a start that never gets ready says why (a status, a time-out, a refusal).
  let lastAnswer = "no answer yet";
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited early (${child.signalCode ?? child.exitCode}); see ${opts.logFile}:\n${tail(opts.logFile, 20)}`);
    }
    try {
      // The login page renders once the app is up; instrumentation has opened the database by then.
      const res = await fetch(`${server.url}/login`, { signal: AbortSignal.timeout(5000) });
      if (res.ok) break;
      lastAnswer = `HTTP ${res.status} at ${((Date.now() - t0) / 1000).toFixed(1)} s: ${(await res.text()).slice(0, 300)}`;
    } catch (err) {
      // not listening yet
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      lastAnswer = `${(err as Error).name}${cause ? ` ${cause}` : ""} at ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    }
    if (Date.now() > deadline) {
      await killServer(server);
      throw new Error(`the server did not answer within ${(deadline - t0) / 1000} s (last: ${lastAnswer}); see ${opts.logFile}:\n${tail(opts.logFile, 30)}`);
    }
    await sleep(100);
  }
  if (opts.viaStart) {
    const serverPid = childPid(child.pid!);
    if (!serverPid) throw new Error(`the launcher (pid ${child.pid}) answers on ${server.url} but has no child process`);
    server.pid = serverPid;
  }
  opts.log?.(`server pid ${server.pid} ready on ${server.url} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return server;
}

/** SIGKILL to the whole process group; resolves once the server process is gone. */
export async function killServer(server: ServerProcess) {
  signalGroup(server.child, "SIGKILL");
  if (!(await exited(server.child, 10_000))) throw new Error(`server pid ${server.pid} survived SIGKILL`);
}

/** SIGTERM, then SIGKILL after 8 s. */
export async function stopServer(server: ServerProcess) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  signalGroup(server.child, "SIGTERM");
  if (!(await exited(server.child, 8000))) await killServer(server);
}

export function tail(file: string, lines: number) {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** `admin create-tenant` (on PGlite before the server starts: one process per data directory). */
export async function createTenant(opts: { dataDir: string; databaseUrl?: string; name: string; email: string; password: string }) {
  const env = serverEnv({ port: 0, dataDir: opts.dataDir, databaseUrl: opts.databaseUrl, logFile: "" });
  delete env.PORT;
  const args = [
    path.join(root, "node_modules/tsx/dist/cli.mjs"),
    "scripts/admin.ts",
    "create-tenant",
    "--name",
    opts.name,
    "--email",
    opts.email,
    // The documented way: the password on standard input, never in argv (docs/operations.md#admin-cli).
    "--password-stdin",
  ];
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin!.end(`${opts.password}\n`);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  const line = stdout.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("{")) throw new Error(`admin create-tenant failed (${code}): ${stderr.trim() || stdout.trim()}`);
  return JSON.parse(line) as { tenant_id: string; api_key: string };
}

/** A fresh database on the PostgreSQL server of `baseUrl`, and how to drop it. */
export async function createDatabase(baseUrl: string, prefix: string) {
  const { default: postgres } = await import("postgres");
  const admin = new URL(baseUrl);
  admin.pathname = "/postgres";
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`create database "${name}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  // If this process is killed before drop(): psql, synchronously, best effort.
  const forget = onAbnormalExit(() => {
    spawnSync("psql", [admin.toString(), "-qc", `drop database if exists "${name}" with (force)`], { stdio: "ignore", timeout: 10_000 });
  });
  return {
    name,
    url: url.toString(),
    async drop() {
      forget();
      const s = postgres(admin.toString(), { max: 1, onnotice: () => {} });
      try {
        await s.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await s.end({ timeout: 5 });
      }
    },
  };
}

type Row = Record<string, unknown>;

/**
 * Runs `fn` with direct SQL access to the service's database. On PGlite the server must be down
 * (the data directory belongs to one process; the lock of a killed server is taken over).
 */
export async function withDatabase<T>(
  target: { dataDir: string; databaseUrl?: string },
  fn: (query: (text: string, params?: unknown[]) => Promise<Row[]>) => Promise<T>,
): Promise<T> {
  if (target.databaseUrl) {
    const { default: postgres } = await import("postgres");
    const sql = postgres(target.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return await fn(async (text, params = []) => [...(await sql.unsafe(text, params as never[]))] as Row[]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
  const { PGlite } = await import("@electric-sql/pglite");
  await acquireDataDirLock(target.dataDir);
  try {
    const pg = await PGlite.create({ dataDir: path.join(target.dataDir, "pglite") });
    try {
      return await fn(async (text, params = []) => (await pg.query<Row>(text, params)).rows);
    } finally {
      await pg.close();
    }
  } finally {
    releaseDataDirLock(target.dataDir);
  }
}

export interface Api {
  request(method: string, p: string, body?: unknown): Promise<{ status: number; json: Row; ms: number }>;
  get(p: string): Promise<Row>;
  post(p: string, body: unknown): Promise<Row>;
  patch(p: string, body: unknown): Promise<Row>;
}

/** JSON over HTTP with the API key; get/post/patch throw on a non-2xx answer. */
export function apiClient(baseUrl: () => string, apiKey: string): Api {
  const request = async (method: string, p: string, body?: unknown) => {
    const t0 = performance.now();
    const res = await fetch(`${baseUrl()}${p}`, {
      method,
      headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    let json: Row;
    try {
      json = JSON.parse(text) as Row;
    } catch {
      json = { raw: text };
    }
    return { status: res.status, json, ms };
  };
  const ok = async (method: string, p: string, body?: unknown) => {
    const r = await request(method, p, body);
    if (r.status < 200 || r.status > 299) throw new Error(`${method} ${p} answered ${r.status}: ${JSON.stringify(r.json).slice(0, 400)}`);
    return r.json;
  };
  return {
    request,
    get: (p) => ok("GET", p),
    post: (p, body) => ok("POST", p, body),
    patch: (p, body) => ok("PATCH", p, body),
  };
}
