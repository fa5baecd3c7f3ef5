import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isAlive } from "./process-alive";

/**
 * PGlite lets two processes open one directory without complaint and then loses writes,
 * so one process owns the directory, recorded in a lock file with its pid.
 */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another process (pid ${pid}), most likely the running server. ` +
        `Embedded PGlite allows one process per directory: stop the server first, ` +
        `or run the service on PostgreSQL (DATABASE_URL) to use the admin CLI beside it.`,
    );
    this.name = "DataDirInUseError";
  }
}

const lockFile = (dataDir: string) => path.join(dataDir, "pglite.lock");

export function acquireDataDirLock(dataDir: string) {
  mkdirSync(dataDir, { recursive: true });
  const file = lockFile(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      process.once("exit", () => releaseDataDirLock(dataDir));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = Number(readFileSync(file, "utf8").trim());
      if (pid === process.pid) return;
      if (pid && isAlive(pid)) throw new DataDirInUseError(dataDir, pid);
      rmSync(file, { force: true }); // left by a process that died: take it over
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}

export function releaseDataDirLock(dataDir: string) {
  try {
    if (Number(readFileSync(lockFile(dataDir), "utf8").trim()) === process.pid) rmSync(lockFile(dataDir));
  } catch {
    // already gone
  }
}
