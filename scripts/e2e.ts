/**
 * End-to-end runner (`npm run test:e2e`, or `npx tsx scripts/e2e.ts [name filter]`): builds when
 * needed, starts the production server on a free port with its own data directory, runs every
 * e2e/*.spec.ts in Chromium through playwright-core, stops the server, removes the data.
 * The last line is always `e2e: <n> passed, <m> failed`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import type { E2EContext, E2ETest } from "../e2e/harness";
import { freePort, startServer as startNextServer, stopServer as stopNextServer, tail, type ServerProcess } from "../e2e/server-process";
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
async function startServer(): Promise<RunningServer> {
  const port = await freePort(3100);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gcs-e2e-"));
  mkdirSync(artifactsDir, { recursive: true });
  const logFile = path.join(artifactsDir, "server.log");
  // Meta's Graph API for the launches' Conversions API events: a loopback receiver e2e/launch-meta.spec.ts starts on this port.
  const metaPort = await freePort(5100);
  process.env.E2E_META_GRAPH_PORT = String(metaPort);
  log(`server starting on port ${port} (${process.env.DATABASE_URL ? "PostgreSQL from DATABASE_URL" : `PGlite in ${dataDir}`})`);
  try {
    const proc = await startNextServer({
      port,
      dataDir,
      databaseUrl: process.env.DATABASE_URL || undefined,
      logFile,
      log,
      env: {
        SIMULATOR_PAIRING_MS: process.env.SIMULATOR_PAIRING_MS ?? "0",
        // The webhook spec's receiver listens on 127.0.0.1: honoured in production mode too.
        WEBHOOK_ALLOW_PRIVATE: "1",
        META_GRAPH_URL: `http://127.0.0.1:${metaPort}/v25.0`,
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
  await ensureBuild({ log });
  // Screenshots and the server log of this run only.
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });

  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let passed = 0;
  let failed = 0;
  const stopAll = async () => {
    await browser?.close().catch(() => {});
    if (server) await stopServer(server);
    browser = undefined;
    server = undefined;
  };
  // Ctrl-C or a CI time-out: still stop the server and remove its data.
  // `on`, not `once`: tsx relays the signal, so a second one arrives; it must not kill us before the server.
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: stopping`);
      void stopAll().finally(() => process.exit(130));
    });
  }

  try {
    server = await startServer();
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
    for (const t of tests) {
      const ctx: E2EContext = {
        baseUrl: server.url,
        browser,
        artifactsDir,
        screenshot: async (page, name) => {
          await page.screenshot({ path: path.join(artifactsDir, `${name}.png`), fullPage: true });
        },
        log: (line) => log(`  ${line}`),
      };
      const t0 = Date.now();
      log(`▶ ${t.name}`);
      try {
        await withTimeout(t.run(ctx), testTimeoutMs, t.name);
        passed++;
        log(`✓ ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (err) {
        failed++;
        log(`✗ ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      }
    }
  } catch (err) {
    failed += Math.max(1, tests.length - passed - failed);
    console.error(`[e2e] ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    const logFile = server?.logFile;
    await stopAll();
    if (failed > 0 && logFile) console.error(`[e2e] last server log lines (${logFile}):\n${tail(logFile, 30)}`);
  }
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`[e2e] ${err instanceof Error ? err.message : String(err)}`);
    console.log("e2e: 0 passed, 1 failed");
    process.exit(1);
  },
);
