import { linkSync, mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isRunning, processIdentity, type ProcessIdentity } from "./process-alive";

/**
 * PGlite lets two processes open one directory without complaint and then loses writes,
 * so one process owns the directory, recorded in a lock file with its pid.
 */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    waitedMs: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another process (pid ${pid}), most likely the running server; ` +
        `it was still running after ${waitedMs / 1000} s. Embedded PGlite allows one process per directory: stop the server first, ` +
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

/**
 * How long a start waits for a live owner to go before it refuses. Longer than the server's own shutdown
 * (at most 5 s, scripts/serve.ts), so a start right after a stop that is still closing the database goes
 * through; a crashed owner (gone, or a zombie not yet reaped) is not waited for.
 */
export const ownerWaitMs = 6000;
const pollMs = 100;
/** Lock files taken over (or seen released) in a row before giving up: only one that keeps coming back gets there. */
const maxTakeovers = 10;

export interface LockOptions {
  /** How long to wait for a live owner to go before refusing; `ownerWaitMs` unless given. */
  waitMs?: number;
}

/**
 * Makes this process the owner of `dataDir`, or throws DataDirInUseError naming the live owner once
 * `waitMs` have passed. The lock file records the owner's identity (pid, start time, boot: a recycled pid
 * is not the owner); a lock of a process that is gone, a zombie, or of an earlier boot is taken over.
 */
export async function acquireDataDirLock(dataDir: string, opts: LockOptions = {}): Promise<void> {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw asDataDirError(dataDir, err);
  }
  const file = lockFile(dataDir);
  const me = processIdentity();
  const waitMs = opts.waitMs ?? ownerWaitMs;
  const started = performance.now();
  for (let takeovers = 0; ; takeovers++) {
    if (createLockFile(dataDir, file, me)) {
      process.once("exit", () => releaseDataDirLock(dataDir));
      return;
    }
    const text = readLock(dataDir, file); // undefined: released meanwhile
    const owner = text === undefined ? undefined : parseOwner(text);
    if (owner && isSelf(owner, me)) return;
    while (owner && isRunning(owner) && readLock(dataDir, file) === text) {
      if (performance.now() - started >= waitMs) throw new DataDirInUseError(dataDir, owner.pid, waitMs);
      await new Promise((r) => setTimeout(r, pollMs));
    }
    if (takeovers === maxTakeovers) throw new Error(`Could not lock ${dataDir}: its lock file ${file} kept coming back`);
    // Left by a process that died (or an earlier life of this pid): take it over, unless it changed meanwhile.
    if (text !== undefined && readLock(dataDir, file) === text) {
      try {
        rmSync(file, { force: true });
      } catch (err) {
        throw asDataDirError(dataDir, err);
      }
    }
  }
}

/**
 * Creates the lock file holding `me`, or answers false when one exists. Written beside it and linked into
 * place, so a lock file never exists empty: another start reading it half-written would take it for stale.
 */
function createLockFile(dataDir: string, file: string, me: ProcessIdentity): boolean {
  const content = `${JSON.stringify(me)}\n`;
  const staging = `${file}.${me.pid}`;
  try {
    writeFileSync(staging, content);
    try {
      linkSync(staging, file);
    } catch (err) {
      // A file system without hard links: create it in place (the short empty moment comes back).
      if (!noHardLinks.includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
      writeFileSync(file, content, { flag: "wx" });
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw asDataDirError(dataDir, err);
  } finally {
    removeQuietly(staging); // a full disk may leave it half-written
  }
}

const noHardLinks = ["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"];

/** The lock file's text; undefined when there is none. */
function readLock(dataDir: string, file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw asDataDirError(dataDir, err);
  }
}

/** The owner a lock file names: `{"pid":…,"startTime":…,"bootId":…}`, or a bare pid (written before start times were). */
function parseOwner(text: string): ProcessIdentity | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed) };
  try {
    const owner = JSON.parse(trimmed) as ProcessIdentity;
    return Number.isInteger(owner?.pid) && owner.pid > 0 ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** This process, not an earlier one that had its pid (a container restarted gives its server the same pid). */
function isSelf(owner: ProcessIdentity, me: ProcessIdentity): boolean {
  if (owner.pid !== me.pid) return false;
  return (owner.startTime === undefined || owner.startTime === me.startTime) && (owner.bootId === undefined || owner.bootId === me.bootId);
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
    const owner = parseOwner(readFileSync(lockFile(dataDir), "utf8"));
    if (owner && isSelf(owner, processIdentity())) rmSync(lockFile(dataDir));
  } catch {
    // already gone
  }
}
