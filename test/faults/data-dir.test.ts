import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { createTenant } from "../../server/auth/create-tenant";

// Fault: the embedded database's DATA_DIR is read-only, or on a full disk, when a process opens it (the
// server at start, or the admin CLI: both open it through openDatabase, db/client.ts). The process must
// stop at once with one message naming DATA_DIR and the cause, and leave an existing database as it was:
// once the fault is gone it opens again with its data. Run through the admin CLI (a real process, exit
// code and stderr): the server itself needs a production build, and opens the directory the same way.
//
// The faults are real: as root (CI containers) a small tmpfs is mounted and remounted read-only, or
// filled; root ignores file modes, so chmod would prove nothing. Not root: the read-only case uses
// chmod -R a-w, and the full disk is skipped (no mount). Either way a skip prints why.
const root = path.resolve(__dirname, "../..");
const isRoot = process.getuid?.() === 0;
const base = mkdtempSync(path.join(tmpdir(), "gcs-datadir-fault-"));
const mounted: string[] = [];
let mountRefused: string | undefined;

function mount(dir: string, options: string) {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir], { stdio: "pipe" });
  mounted.push(dir);
}

if (isRoot) {
  try {
    mount(path.join(base, "probe"), "size=1m");
  } catch (err) {
    mountRefused = `root, but mount is not permitted here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`;
  }
}
const canMount = isRoot && !mountRefused;
const readOnlySkip = isRoot && !canMount ? mountRefused : undefined;
const fullSkip = !isRoot ? "not root: a full disk needs a small tmpfs mounted" : mountRefused;
if (readOnlySkip) console.log(`[faults] data-dir: read-only case skipped: ${readOnlySkip}`);
if (fullSkip) console.log(`[faults] data-dir: full-disk cases skipped: ${fullSkip}`);

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * `npm run admin -- …` on the given DATA_DIR (embedded PGlite), minus npm; killed after `killAfterMs` (a hang
 * fails the test). Generous: on a loaded 2-core machine starting tsx alone took 20 s, initdb over a minute.
 */
function admin(args: string[], dataDir: string, killAfterMs = 120_000): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  delete env.DATABASE_URL;
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], { cwd: root, env, timeout: killAfterMs }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

/** Every file of the directory, path and content hashed: equal before and after means untouched. */
function fingerprint(dir: string): string {
  const hash = createHash("sha256");
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else hash.update(path.relative(dir, p)).update("\0").update(readFileSync(p));
    }
  };
  walk(dir);
  return hash.digest("hex");
}

/** Writes zeros until the disk refuses (ENOSPC). */
function fill(file: string) {
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fd);
  }
  // The last partial block: fill it byte by byte in bigger and smaller steps.
  const fd2 = openSync(file, "a");
  try {
    for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 2)) {
      try {
        for (;;) writeSync(fd2, Buffer.alloc(size));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      }
    }
  } finally {
    closeSync(fd2);
  }
}

/** One plain line on stderr naming DATA_DIR, no stack trace, exit code 1. */
function refusal(r: CliResult) {
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

const disk = path.join(base, "disk");
const dataDir = path.join(disk, "data");
const email = "fault@example.test";
let tenantId: string;

beforeAll(async () => {
  if (readOnlySkip && fullSkip) return;
  if (canMount) mount(disk, "size=128m");
  // An existing database with data, in DATA_DIR (made here: a PostgreSQL-only run has no PGlite snapshot).
  const database = await openDatabase({ dataDir });
  try {
    ({ tenantId } = await createTenant(database.db, { name: "Antes da falha", email, password: "senha-segura-123" }));
  } finally {
    await database.close();
  }
  expect(existsSync(path.join(dataDir, "pglite", "PG_VERSION"))).toBe(true);
}, 120_000);

afterAll(() => {
  if (!isRoot) chmodSync(base, 0o700);
  if (!isRoot && existsSync(dataDir)) execFileSync("chmod", ["-R", "u+w", disk]);
  for (const dir of mounted.reverse()) {
    try {
      execFileSync("umount", [dir], { stdio: "pipe" });
    } catch {
      execFileSync("umount", ["-l", dir], { stdio: "pipe" });
    }
  }
  rmSync(base, { recursive: true, force: true });
});

describe("fault: DATA_DIR unusable at start (embedded PGlite)", { timeout: 400_000 }, () => {
  it.skipIf(Boolean(readOnlySkip))(
    "read-only: exits 1 at once naming DATA_DIR and the cause; the database opens again, data intact, once writable",
    async () => {
      const before = fingerprint(path.join(dataDir, "pglite"));
      if (isRoot) execFileSync("mount", ["-o", "remount,ro", disk]);
      else execFileSync("chmod", ["-R", "a-w", disk]);
      let r: CliResult;
      try {
        r = await admin(["create-api-key", "--email", email], dataDir);
        expect(fingerprint(path.join(dataDir, "pglite"))).toBe(before);
      } finally {
        if (isRoot) execFileSync("mount", ["-o", "remount,rw", disk]);
        else execFileSync("chmod", ["-R", "u+w", disk]);
      }
      const line = refusal(r);
      console.log(`[faults] data-dir: read-only refused in ${r.ms} ms: ${line}`);
      expect(line).toContain(`DATA_DIR ${dataDir} cannot be written`);
      expect(line).toMatch(isRoot ? /read-only file system \(EROFS\)/ : /permission denied \(EACCES\)/);
      expect(readdirSync(dataDir).sort()).toEqual(["pglite"]);

      const again = await admin(["create-api-key", "--email", email], dataDir);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ tenant_id: tenantId });
    },
  );

  it.skipIf(Boolean(fullSkip))(
    "full disk: exits 1 at once naming DATA_DIR and ENOSPC, leaves no lock file; opens again with its data once space is freed",
    async () => {
      const before = fingerprint(path.join(dataDir, "pglite"));
      const filler = path.join(disk, "filler");
      fill(filler);
      let r: CliResult;
      try {
        r = await admin(["create-api-key", "--email", email], dataDir);
        expect(fingerprint(path.join(dataDir, "pglite"))).toBe(before);
      } finally {
        rmSync(filler);
      }
      const line = refusal(r);
      console.log(`[faults] data-dir: full disk refused in ${r.ms} ms: ${line}`);
      expect(line).toContain(`DATA_DIR ${dataDir} cannot be written`);
      expect(line).toMatch(/no space left on device \(ENOSPC\)/);
      expect(readdirSync(dataDir).sort()).toEqual(["pglite"]);

      const again = await admin(["create-api-key", "--email", email], dataDir);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ tenant_id: tenantId });
    },
  );

  it.skipIf(Boolean(fullSkip))(
    "a new DATA_DIR on a disk too small for the database: exits 1 naming DATA_DIR and the lack of space, leaves nothing half-made",
    async () => {
      const tiny = path.join(base, "tiny");
      mount(tiny, "size=1m");
      const fresh = path.join(tiny, "data");
      const r = await admin(["migrate"], fresh, 300_000);
      const line = refusal(r);
      console.log(`[faults] data-dir: new database on a 1 MB disk refused in ${r.ms} ms: ${line}`);
      expect(line).toContain(`DATA_DIR ${fresh} cannot be written`);
      expect(line).toMatch(/no space left on device/);
      // No staging directory (.initdb-*), no database directory, no lock.
      expect(readdirSync(fresh)).toEqual([]);
    },
  );
});
