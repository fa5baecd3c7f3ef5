import { mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
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

/** Why the file system refuses a write: the errno codes of a read-only, forbidden or full directory. */
const fileSystemFaults: Record<string, string> = {
  EROFS: "it is on a read-only file system (EROFS)",
  EACCES: "permission denied (EACCES)",
  EPERM: "operation not permitted (EPERM)",
  ENOSPC: "no space left on device (ENOSPC)",
  EDQUOT: "disk quota exceeded (EDQUOT)",
};

/**
 * The data directory cannot be written: read-only, not ours, or full. Raised before the database is
 * opened, so nothing in the directory was changed.
 */
export class DataDirUnusableError extends Error {
  constructor(
    readonly dataDir: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `DATA_DIR ${dataDir} cannot be written: ${reason}. The embedded database (PGlite) keeps its files there; ` +
        `nothing in it was changed. Make it writable or free space (or point DATA_DIR elsewhere, or set DATABASE_URL for PostgreSQL), then start again.`,
      options,
    );
    this.name = "DataDirUnusableError";
  }
}

/** A file-system error on the data directory as a DataDirUnusableError (read-only, forbidden, full); else as is. */
export function asDataDirError(dataDir: string, err: unknown): unknown {
  const reason = fileSystemFaults[(err as NodeJS.ErrnoException)?.code ?? ""];
  return reason ? new DataDirUnusableError(dataDir, reason, { cause: err }) : err;
}

/** Free bytes for this process under `dir`, or null when the file system cannot say. */
export function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

const lockFile = (dataDir: string) => path.join(dataDir, "pglite.lock");

export function acquireDataDirLock(dataDir: string) {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw asDataDirError(dataDir, err);
  }
  const file = lockFile(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      process.once("exit", () => releaseDataDirLock(dataDir));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        // A full disk creates the file and then fails to write the pid: leave no empty lock behind.
        if (["ENOSPC", "EDQUOT"].includes((err as NodeJS.ErrnoException).code ?? "")) removeQuietly(file);
        throw asDataDirError(dataDir, err);
      }
      const pid = Number(readFileSync(file, "utf8").trim());
      if (pid === process.pid) return;
      if (pid && isAlive(pid)) throw new DataDirInUseError(dataDir, pid);
      rmSync(file, { force: true }); // left by a process that died: take it over
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}

function removeQuietly(file: string) {
  try {
    rmSync(file, { force: true });
  } catch {
    // the error being reported says enough
  }
}

export function releaseDataDirLock(dataDir: string) {
  try {
    if (Number(readFileSync(lockFile(dataDir), "utf8").trim()) === process.pid) rmSync(lockFile(dataDir));
  } catch {
    // already gone
  }
}
