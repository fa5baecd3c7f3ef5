/**
 * The test server (test/http-server.ts) in a process of its own, on the test file's PostgreSQL database
 * (DATABASE_URL), for tests of what several processes must share (the join link's click cap, its cache).
 * Started by `startChildServer` (below, from the test's process): prints one JSON line `{"url": …}` once it
 * listens, and exits when its stdin closes (the test ended, or died) or on SIGTERM.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ChildServer {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/**
 * Spawns this file as a server process whose clients come from `peerAddress`; `jobs`: periodic job ids it runs too;
 * `engines`: event-driven engine ids (inngest/engines/) whose in-process runner it starts.
 */
export function startChildServer(peerAddress: string, opts: { jobs?: string[]; engines?: string[] } = {}): Promise<ChildServer> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/child-server.ts"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      CHILD_SERVER_PEER: peerAddress,
      CHILD_SERVER_JOBS: (opts.jobs ?? []).join(","),
      CHILD_SERVER_ENGINES: (opts.engines ?? []).join(","),
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the child server did not start within 60 s")), 60_000);
    child.once("exit", (code) => reject(new Error(`the child server exited (${code}) before listening`)));
    createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer);
      resolve({
        url: (JSON.parse(line) as { url: string }).url,
        pid: child.pid as number,
        close: async () => {
          child.stdin.end();
          await exited;
        },
      });
    });
  });
}

async function main() {
  const { openDatabase, setDatabase } = await import("../db/client");
  const { startTestServer } = await import("./http-server");
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("child server: DATABASE_URL is not set (PostgreSQL only: PGlite is one process per database)");
  const database = openDatabase({ url, migrate: false });
  setDatabase(database);
  const server = await startTestServer({ peerAddress: process.env.CHILD_SERVER_PEER });
  // Periodic jobs the test asks for, by id (CHILD_SERVER_JOBS=series-runs), on short timers (their own first delay).
  const jobIds = (process.env.CHILD_SERVER_JOBS ?? "").split(",").filter(Boolean);
  const timers: { stop(): Promise<void> }[] = [];
  if (jobIds.length) {
    const { periodicJobs } = await import("../inngest/jobs/index");
    const { JobTimer } = await import("../inngest/in-process/job-timer");
    const { getServices } = await import("../server/services");
    const services = await getServices();
    for (const job of periodicJobs.filter((j) => jobIds.includes(j.id))) timers.push(new JobTimer(job, services, { intervalMs: 300 }).start());
  }
  // Engines the test asks for, by id (CHILD_SERVER_ENGINES=group-actions), with their in-process runners.
  const engineIds = (process.env.CHILD_SERVER_ENGINES ?? "").split(",").filter(Boolean);
  if (engineIds.length) {
    const { engines } = await import("../inngest/engines/index");
    const { getServices } = await import("../server/services");
    const services = await getServices();
    for (const engine of engines.filter((e) => engineIds.includes(e.id))) timers.push(engine.inProcess(services));
  }
  // The process ends with its sockets: no wait for the clients' keep-alive connections to go idle.
  const stop = async () => {
    // The job timers first (a pass in progress finishes), then the database they use.
    await Promise.all(timers.map((t) => t.stop()));
    await (await database).close();
    process.exit(0);
  };
  process.stdin.on("end", stop).resume();
  process.on("SIGTERM", stop);
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
}

if (process.env.CHILD_SERVER_PEER !== undefined && process.argv[1]?.endsWith("child-server.ts")) {
  main().catch((err) => {
    console.error("[child-server]", err);
    process.exit(1);
  });
}
