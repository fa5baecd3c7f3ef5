/**
 * A restart right after a crash (issue 23): the server, started as `npm start` runs it (scripts/start.ts
 * spawning the server process), is killed with SIGKILL and started again at once, ROUNDS times on one
 * PGlite DATA_DIR.
 *
 * A killed process stays a zombie until its parent reaps it: seen here for ~1.4 s when its parent was busy,
 * ~2 s when its parent died with it (a supervisor killing the whole group: the orphan goes to PID 1, which
 * reaps late). `kill(pid, 0)` succeeds on a zombie, so the data-dir lock took it for a live owner and the new
 * server refused to start. To hold that window open on any machine, the launcher is stopped (SIGSTOP)
 * before its server is killed: it cannot reap it, and the dead server stays a zombie, checked in /proc,
 * until the new server is up. Then the launcher resumes, reaps it and exits as `npm start` does.
 *
 * Each round also writes a setting and the next round reads it back: the data of every lifetime is there.
 * At the end a second server started on the running one's DATA_DIR waits, then exits 1 naming its pid.
 * The server's log (every lifetime): e2e/artifacts/restart-server.log. Always PGlite: the lock is the subject.
 */
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { ownerWaitMs } from "../db/data-dir-lock";
import { processState } from "../test/proc";
import { AssertionError, assert, type E2ETest } from "./harness";
import {
  apiClient,
  createTenant,
  exited,
  freePort,
  root,
  startServer,
  stopServer,
  tempDataDir,
  type ServerOptions,
  type ServerProcess,
} from "./server-process";

const ROUNDS = Number(process.env.RESTART_ROUNDS ?? 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function untilZombie(pid: number) {
  const deadline = Date.now() + 5000;
  while (processState(pid) !== "Z") {
    assert(Date.now() < deadline, `pid ${pid} did not become a zombie within 5 s after SIGKILL (state ${processState(pid)})`);
    await sleep(5);
  }
}

async function restartTest(log: (line: string) => void) {
  const temp = tempDataDir("gcs-restart-");
  const logFile = path.join(root, "e2e", "artifacts", "restart-server.log");
  rmSync(logFile, { force: true });
  const stopped = new Set<number>();
  let server: ServerProcess | undefined;
  try {
    const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const tenant = await createTenant({ dataDir: temp.dir, name: "Restart", email: `restart-${unique}@example.com`, password: "senha-segura-restart-123" });
    const opts: ServerOptions = { port: await freePort(), dataDir: temp.dir, logFile, log, viaStart: true };
    server = await startServer(opts);
    const api = apiClient(() => server!.url, tenant.api_key);
    const perLoop = async () =>
      ((await api.get("/api/external/list-settings")).settings as { dispatch_rates: { dispatches_per_loop: number } }).dispatch_rates.dispatches_per_loop;
    await api.patch("/api/external/edit-settings", { dispatch_rates: { dispatches_per_loop: 1 } });

    const waited: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const dead = server;
      const launcher = dead.child.pid!;
      process.kill(launcher, "SIGSTOP");
      stopped.add(launcher);
      process.kill(dead.pid, "SIGKILL");
      await untilZombie(dead.pid);
      const t0 = Date.now();
      server = await startServer(opts);
      waited.push(Date.now() - t0);
      assert(
        processState(dead.pid) === "Z",
        `round ${round}: the killed server (pid ${dead.pid}) was reaped before the new one was up: the zombie window was not hit`,
      );
      process.kill(launcher, "SIGCONT");
      stopped.delete(launcher);
      assert(await exited(dead.child, 10_000), `round ${round}: the launcher of the killed server did not exit after reaping it`);
      assert(processState(dead.pid) === "gone", `round ${round}: the killed server (pid ${dead.pid}) is still there after its launcher exited`);

      const seen = await perLoop();
      assert(seen === round, `round ${round}: the setting written before the kill reads ${seen}, expected ${round}`);
      await api.patch("/api/external/edit-settings", { dispatch_rates: { dispatches_per_loop: round + 1 } });
      log(`round ${round}: pid ${dead.pid} killed and left a zombie; pid ${server.pid} up ${waited.at(-1)} ms later, the setting of the last life read back`);
    }
    log(`${ROUNDS} restarts beside a zombie, each up in ${Math.min(...waited)}–${Math.max(...waited)} ms`);

    // A live owner is still refused, once the wait is over, by a server that exits (1) naming it.
    const t0 = Date.now();
    const second = await startServer({ ...opts, port: await freePort(), viaStart: false }).then(
      (s) => s,
      (err: Error) => err,
    );
    const refusedAfter = Date.now() - t0;
    if (!(second instanceof Error)) {
      await stopServer(second);
      throw new AssertionError(`a second server started on the DATA_DIR of the running one (pid ${server.pid})`);
    }
    assert(
      second.message.includes("exited early (1)") &&
        second.message.includes(`[serve] could not start: The data directory ${temp.dir} is in use by another process (pid ${server.pid})`),
      `the second server should exit 1 naming the running one (pid ${server.pid}): ${second.message}`,
    );
    assert(refusedAfter >= ownerWaitMs, `the second server gave up after ${refusedAfter} ms, before the ${ownerWaitMs} ms wait`);
    assert(JSON.parse(readFileSync(path.join(temp.dir, "pglite.lock"), "utf8")).pid === server.pid, "the refused server changed the lock file");
    assert((await perLoop()) === ROUNDS + 1, "the running server lost its data");
    log(`a second server on the same DATA_DIR: refused after ${refusedAfter} ms, naming pid ${server.pid}; the running one untouched`);
  } finally {
    for (const pid of stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
    if (server) await stopServer(server).catch(() => {});
    temp.remove();
  }
}

export const tests: E2ETest[] = [
  {
    name: "restart: SIGKILL the server (npm start's process) and start it again at once, while the dead one is a zombie, 10 rounds on one PGlite DATA_DIR; a second server beside the live one refused after the wait",
    // Eleven server starts: 60 s on an idle machine, 110 s beside the other e2e lane on a loaded one.
    timeoutMs: 300_000,
    // Always PGlite (its DATA_DIR lock is the subject): the PostgreSQL run would repeat the PGlite run's test.
    only: { database: "pglite", why: "its subject is PGlite's DATA_DIR lock; it runs in the PGlite run" },
    run: ({ log }) => restartTest(log),
  },
];
