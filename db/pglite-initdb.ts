import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { DataDirUnusableError, freeBytes } from "./data-dir-lock";

/** Runs PGlite's initdb on the directory given as its argument, then closes (resolved from the cwd). */
const initdbScript = `
const { PGlite } = await import("@electric-sql/pglite");
const db = await PGlite.create({ dataDir: process.argv[1] });
await db.close();
`;

const stagingPrefix = ".initdb-";

/** About what a new, migrated cluster takes on disk (40 MB measured): less free than this and initdb cannot finish. */
const clusterBytes = 48 * 1024 * 1024;

/**
 * Creates an embedded database cluster in `pgliteDir` when it holds none, in a child process.
 *
 * Why a child: PGlite's initdb starts a second PostgreSQL instance beside the first and copies its memory;
 * the process that runs it peaks near 900 MB and, after collection, still holds about 100 MB more than a
 * process that opened an existing database. The server then ran its whole first life at ~400 MB instead of
 * ~300 MB. The child takes that peak for three seconds and exits.
 *
 * Why a staging directory: the cluster is built next to its final place and renamed into it once complete,
 * so a process killed during initdb never leaves a half-made cluster where the database belongs (the
 * staging directory is removed on the next attempt). PGlite itself seems to write PG_VERSION last (a start
 * killed 1–3 s into initdb left files without it, and the next start ran initdb again), but that is its
 * internal order, not a promise; the rename is ours.
 */
export async function initEmbeddedCluster(pgliteDir: string): Promise<void> {
  if (existsSync(path.join(pgliteDir, "PG_VERSION"))) return;
  // Never deleted here: a directory without PG_VERSION that holds files is not ours to judge.
  if (existsSync(pgliteDir) && readdirSync(pgliteDir).length > 0) {
    throw new Error(`${pgliteDir} holds files but no database (no PG_VERSION): move it away, or point DATA_DIR elsewhere`);
  }
  const parent = path.dirname(pgliteDir);
  mkdirSync(parent, { recursive: true });
  for (const entry of readdirSync(parent)) {
    if (entry.startsWith(stagingPrefix)) rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
  const staging = path.join(parent, `${stagingPrefix}${process.pid}`);
  try {
    await runInitdb(staging);
  } catch (err) {
    try {
      rmSync(staging, { recursive: true, force: true });
    } catch {
      // removed on the next attempt (above)
    }
    // PGlite's file system reports a full disk as a bare errno number: say what it is.
    const free = freeBytes(parent);
    if (free !== null && free < clusterBytes) {
      const reason = `no space left on device (${Math.floor(free / 1024)} KB free; a new embedded database needs about ${clusterBytes / 1024 / 1024} MB)`;
      throw new DataDirUnusableError(parent, reason, { cause: err });
    }
    throw err;
  }
  rmSync(pgliteDir, { recursive: true, force: true }); // empty, if there
  renameSync(staging, pgliteDir);
}

function runInitdb(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // cwd: the project folder (as for the migrations), where node_modules resolves @electric-sql/pglite.
    const child = spawn(process.execPath, ["--input-type=module", "-e", initdbScript, dir], {
      cwd: process.cwd(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`creating the embedded database in ${dir} failed (${signal ?? `exit ${code}`}): ${stderr.trim() || "no output"}`));
    });
  });
}
