/**
 * End-to-end runner (`npm run test:e2e`, or `npx tsx scripts/e2e.ts [name filter]`): builds when
 * needed, starts the production server on a free port with its own data directory, runs every
 * e2e/*.spec.ts in Chromium through playwright-core, stops the server, removes the data. The specs run in two
 * lanes side by side (E2E_LANES; laneCount below), each with its own server, data and browser.
 * The last line is always `e2e: <n> passed, <m> failed[, <k> skipped]` (a test `only` for the other database is skipped).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import type { E2EContext, E2ETest } from "../e2e/harness";
import { createDatabase, freePort, startServer as startNextServer, stopServer as stopNextServer, tail, type ServerProcess } from "../e2e/server-process";
import { ensureBuild } from "./ensure-build";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const e2eDir = path.join(root, "e2e");
const artifactsDir = path.join(e2eDir, "artifacts");
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const testTimeoutMs = Number(process.env.E2E_TEST_TIMEOUT_MS ?? 180_000);

const log = (line: string) => console.log(`[e2e] ${line}`);

interface RunningServer {
  url: string;
  process: ServerProcess;
  logFile: string;
  dataDir: string;
}

/**
 * The production server on a free port in 3100–3999 with a fresh data directory: the PGlite database
 * (one process per directory) and the generated secrets. With DATABASE_URL, PostgreSQL is used as
 * given and only secrets live here.
 */
/**
 * Meta's Graph API for the launches' Conversions API events: a loopback receiver e2e/launch-meta.spec.ts starts on
 * this port (E2E_META_GRAPH_PORT), one for the run, so whichever lane runs that spec finds its server pointed at it.
 */
let metaGraphPort: Promise<number> | undefined;
function metaGraph(): Promise<number> {
  metaGraphPort ??= freePort(5100).then((port) => {
    process.env.E2E_META_GRAPH_PORT = String(port);
    return port;
  });
  return metaGraphPort;
}

async function startServer(lane: string, databaseUrl = process.env.DATABASE_URL || undefined): Promise<RunningServer> {
  const port = await freePort(3100);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gcs-e2e-"));
  mkdirSync(artifactsDir, { recursive: true });
  const logFile = path.join(artifactsDir, lane ? `server-${lane.replace(" ", "")}.log` : "server.log");
  log(`${lane ? `[${lane}] ` : ""}server starting on port ${port} (${databaseUrl ? "PostgreSQL" : `PGlite in ${dataDir}`})`);
  try {
    const proc = await startNextServer({
      port,
      dataDir,
      databaseUrl,
      logFile,
      log,
      env: {
        SIMULATOR_PAIRING_MS: process.env.SIMULATOR_PAIRING_MS ?? "0",
        // The webhook spec's receiver listens on 127.0.0.1: honoured in production mode too.
        WEBHOOK_ALLOW_PRIVATE: "1",
        META_GRAPH_URL: `http://127.0.0.1:${await metaGraph()}/v25.0`,
        // Every spec signs up and signs in from 127.0.0.1, and with DATABASE_URL the buckets outlive a
        // run: the per-address limits would refuse a second run within the hour. Per-account stays 10.
        RATE_LIMIT_SIGN_UP_PER_ADDRESS_PER_HOUR: "1000",
        RATE_LIMIT_SIGN_IN_PER_ADDRESS: "1000",
      },
    });
    return { url: proc.url, process: proc, logFile, dataDir };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function stopServer(server: RunningServer) {
  await stopNextServer(server.process);
  rmSync(server.dataDir, { recursive: true, force: true });
}

async function loadTests(filter?: string): Promise<E2ETest[]> {
  const files = readdirSync(e2eDir)
    .filter((f) => f.endsWith(".spec.ts"))
    .sort();
  const tests: E2ETest[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(e2eDir, f)).href)) as { tests?: E2ETest[] };
    for (const t of mod.tests ?? []) tests.push({ ...t, name: `${f.replace(/\.spec\.ts$/, "")} › ${t.name}` });
  }
  return filter ? tests.filter((t) => t.name.toLowerCase().includes(filter.toLowerCase())) : tests;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000} s`)), ms);
    }),
  ]);
}

/**
 * Specs that start servers of their own (and kill them): kept in one lane, so two of them never pick ports at
 * the same moment and the CPU-heavy crash runs do not overlap each other.
 */
const ownServerSpecs = /^(crash|crash-evolution|edge|restart|two-processes) › /;

/**
 * The tests split into `count` lanes run side by side, each with its own server (its own data directory, or
 * its own PostgreSQL database beside DATABASE_URL for every lane but the first) and browser. The specs with
 * servers of their own form the first lane (on PGlite about as long as all the others); the other spec files are
 * dealt to the other lanes in turn. One lane: the file order.
 */
function lanesOf(tests: E2ETest[], count: number): E2ETest[][] {
  if (count <= 1) return [tests];
  const fileOf = (t: E2ETest) => t.name.slice(0, t.name.indexOf(" › "));
  const own = tests.filter((t) => ownServerSpecs.test(t.name));
  const lanes: E2ETest[][] = [own, ...Array.from({ length: count - 1 }, () => [] as E2ETest[])];
  // A spec file stays whole, in its order (a test may build on the one before it).
  const files = [...new Set(tests.filter((t) => !ownServerSpecs.test(t.name)).map(fileOf))];
  for (const t of tests) {
    if (!ownServerSpecs.test(t.name)) lanes[1 + (files.indexOf(fileOf(t)) % (count - 1))].push(t);
  }
  return lanes.filter((l) => l.length > 0);
}

interface Lane {
  name: string;
  tests: E2ETest[];
  server?: RunningServer;
  browser?: Browser;
  database?: { url: string; drop(): Promise<void> };
}

async function stopLane(lane: Lane) {
  await lane.browser?.close().catch(() => {});
  if (lane.server) await stopServer(lane.server);
  await lane.database?.drop().catch(() => {});
  lane.browser = undefined;
  lane.server = undefined;
  lane.database = undefined;
}

async function runLane(lane: Lane, first: boolean): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  const say = (line: string) => log(lane.name ? `[${lane.name}] ${line}` : line);
  try {
    if (!first && process.env.DATABASE_URL) lane.database = await createDatabase(process.env.DATABASE_URL, "gcs_e2e_lane");
    lane.server = await startServer(lane.name, lane.database?.url);
    lane.browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
    for (const t of lane.tests) {
      const ctx: E2EContext = {
        baseUrl: lane.server.url,
        browser: lane.browser,
        artifactsDir,
        screenshot: async (page, name) => {
          await page.screenshot({ path: path.join(artifactsDir, `${name}.png`), fullPage: true });
        },
        log: (line) => say(`  ${line}`),
      };
      const t0 = Date.now();
      say(`▶ ${t.name}`);
      try {
        const run = t.run(ctx);
        await withTimeout(run, Math.max(testTimeoutMs, t.timeoutMs ?? 0), t.name).catch(async (err) => {
          // A test that timed out would go on beside the next one: its pages are closed (its next browser step
          // throws) and it gets a moment to unwind before the next test starts.
          if (!/timed out after/.test(String(err))) throw err;
          await Promise.all(lane.browser?.contexts().map((c) => c.close().catch(() => {})) ?? []);
          await withTimeout(run, 15_000, t.name).catch(() => {});
          throw err;
        });
        passed++;
        say(`✓ ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (err) {
        failed++;
        say(`✗ ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      }
    }
  } catch (err) {
    failed += Math.max(1, lane.tests.length - passed - failed);
    console.error(`[e2e] ${lane.name ? `[${lane.name}] ` : ""}${err instanceof Error ? err.message : String(err)}`);
  } finally {
    const logFile = lane.server?.logFile;
    await stopLane(lane);
    if (failed > 0 && logFile) console.error(`[e2e] last server log lines (${logFile}):\n${tail(logFile, 30)}`);
  }
  return { passed, failed };
}

async function main(): Promise<number> {
  const filter = process.argv[2];
  const tests = await loadTests(filter);
  if (tests.length === 0) {
    log(filter ? `no test matches "${filter}"` : "no tests found");
    console.log("e2e: 0 passed, 0 failed");
    return 1;
  }
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium not found at ${chromiumPath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const database = process.env.DATABASE_URL ? "postgres" : "pglite";
  const skipped = tests.filter((t) => t.only && t.only.database !== database);
  for (const t of skipped) log(`– ${t.name}: skipped on ${database} (${t.only?.why})`);
  if (skipped.length === tests.length) {
    console.log(`e2e: 0 passed, 0 failed, ${skipped.length} skipped`);
    return 0;
  }
  await ensureBuild({ log });
  // Screenshots and the server log of this run only.
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });

  const split = lanesOf(
    tests.filter((t) => !skipped.includes(t)),
    laneCount(tests.length - skipped.length),
  );
  const lanes: Lane[] = split.map((l, i) => ({ name: split.length > 1 ? `lane ${i + 1}` : "", tests: l }));
  if (lanes.length > 1) log(`${lanes.length} lanes: ${lanes.map((l) => `${l.name} ${l.tests.length} tests`).join(", ")}`);
  // Ctrl-C or a CI time-out: still stop the servers and remove their data.
  // `on`, not `once`: tsx relays the signal, so a second one arrives; it must not kill us before the servers.
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: stopping`);
      void Promise.all(lanes.map(stopLane)).finally(() => process.exit(130));
    });
  }
  const results = await Promise.all(lanes.map((lane, i) => runLane(lane, i === 0)));
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`e2e: ${passed} passed, ${failed} failed${skipped.length ? `, ${skipped.length} skipped` : ""}`);
  return failed > 0 ? 1 : 0;
}

/**
 * E2E_LANES (default 2, 1 for a run of fewer than 8 tests): how many servers and browsers run the specs side by
 * side. The suite waits on timers and the server as much as it computes, so two lanes fit two cores.
 */
function laneCount(tests: number): number {
  const asked = Number(process.env.E2E_LANES ?? (tests < 8 ? 1 : 2));
  return Number.isInteger(asked) && asked >= 1 ? Math.min(asked, 4) : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`[e2e] ${err instanceof Error ? err.message : String(err)}`);
    console.log("e2e: 0 passed, 1 failed");
    process.exit(1);
  },
);
