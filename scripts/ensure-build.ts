/**
 * Builds the Next.js app when there is no build yet or a source file changed since the last one.
 * Used by `npm start` and the e2e runner; `tsx scripts/ensure-build.ts [--force]` runs it alone.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isAlive } from "../db/process-alive";
import { serverBundle } from "../boot/serve-args";
import { buildServerBundle } from "./build-server";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const buildIdFile = path.join(root, ".next", "BUILD_ID");
// Outside .next (next build empties it) and inside an ignored folder.
const lockFile = path.join(root, "node_modules", ".cache", "next-build.lock");

/** What goes into the build. Tests, scripts and e2e specs do not change its output. */
const sourceDirs = ["app", "server", "db", "inngest", "public"];
const sourceFiles = [
  "scripts/serve.ts",
  "scripts/build-server.ts",
  "boot/serve-args.ts",
  "instrumentation.ts",
  "proxy.ts",
  "middleware.ts",
  "next.config.mjs",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
];
const ignored = (name: string) => name === "node_modules" || name.startsWith(".") || /\.test\.tsx?$/.test(name);

function newestIn(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (ignored(entry.name)) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** The modification time of the newest source file (ms). */
export function newestSourceMtime(): number {
  let newest = 0;
  for (const d of sourceDirs) if (existsSync(path.join(root, d))) newest = Math.max(newest, newestIn(path.join(root, d)));
  for (const f of sourceFiles) if (existsSync(path.join(root, f))) newest = Math.max(newest, statSync(path.join(root, f)).mtimeMs);
  return newest;
}

/** Why a build is needed, or undefined when the current one is up to date. */
export function buildNeeded(): string | undefined {
  if (!existsSync(buildIdFile)) return "no build yet";
  if (!existsSync(serverBundle)) return "no server bundle yet";
  return newestSourceMtime() > statSync(buildIdFile).mtimeMs ? "sources changed since the last build" : undefined;
}

/** Two builds into one .next folder corrupt it: one process builds, the others wait for it. */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  mkdirSync(path.dirname(lockFile), { recursive: true });
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = Number(readFileSync(lockFile, "utf8").trim());
      if (!pid || !isAlive(pid)) {
        rmSync(lockFile, { force: true }); // left by a build that died
        continue;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  const release = () => rmSync(lockFile, { force: true });
  process.once("exit", release);
  try {
    return await fn();
  } finally {
    release();
    process.off("exit", release);
  }
}

/**
 * Set by `npm test` (scripts/test.ts) once `next typegen` and `tsc --noEmit` passed: the newest source's time then. When
 * the sources are still those, `next build` skips its own TypeScript step (next.config.mjs), the same program over the
 * same tsconfig.json checked a minute before: about 85 s of a 180 s build on a loaded 2-core machine.
 */
export const typecheckedEnv = "GCS_TYPECHECKED_SOURCES";

function runNextBuild(log: (line: string) => void): Promise<void> {
  const typechecked = process.env[typecheckedEnv] === String(newestSourceMtime());
  if (typechecked) log("[build] its TypeScript step skipped: npm test's tsc checked these sources");
  return new Promise((resolve, reject) => {
    // node + the bin file, not npx: one process to wait for, none left behind.
    const child = spawn(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", GCS_SKIP_BUILD_TYPECHECK: typechecked ? "1" : "" },
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`next build failed (${signal ?? `exit code ${code}`})`));
    });
    log("[build] next build started");
  });
}

export interface EnsureBuildOptions {
  /** Build even when the current build looks up to date. */
  force?: boolean;
  log?: (line: string) => void;
}

/** Builds when needed; resolves with whether a build ran. Throws when the build fails. */
export async function ensureBuild(opts: EnsureBuildOptions = {}): Promise<{ built: boolean }> {
  const log = opts.log ?? ((line: string) => console.log(line));
  return withBuildLock(async () => {
    // Checked inside the lock: another process may have just built.
    const reason = opts.force ? "forced" : buildNeeded();
    if (!reason) return { built: false };
    log(`[build] building the app (${reason})…`);
    const startedAt = new Date();
    const t0 = Date.now();
    await runNextBuild(log);
    await buildServerBundle();
    // Stamp the build with its start time, so a file edited while it ran triggers the next build.
    if (existsSync(buildIdFile)) utimesSync(buildIdFile, startedAt, startedAt);
    log(`[build] done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return { built: true };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  ensureBuild({ force: process.argv.includes("--force") }).then(
    ({ built }) => {
      if (!built) console.log("[build] up to date");
    },
    (err: Error) => {
      console.error(`[build] ${err.message}`);
      process.exit(1);
    },
  );
}
