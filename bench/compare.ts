/**
 * `npm run bench -- compare <ref> [pglite|postgres]`: the dispatch bench (bench/run.ts) of another commit, then of this
 * checkout, one after the other on the same machine, printed side by side. The other commit is checked out with
 * `git worktree add` in a temporary folder; its node_modules is a hard-linked copy of this one's when both lockfiles are
 * equal (seconds, no disk), else `npm ci` there. Each side runs its own bench code, builds its own `.next` and starts
 * its own server, so a figure the other commit's bench does not take is printed as n/a. The worktree is removed at
 * the end. Every BENCH_* variable (BENCH_GROUPS, BENCH_DISPATCH_ONLY, BENCH_STATEMENTS, …) reaches both runs.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { root } from "../e2e/server-process";

const log = (line: string) => console.log(`[compare] ${line}`);

type Figures = Record<string, unknown>;
interface BenchRun {
  label: string;
  /** The bench's final JSON line (`{"bench":"dispatch", machine, pglite, postgres, webhooks}`). */
  result: Record<string, unknown> | null;
}

function git(args: string[], cwd = root): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

function run(cmd: string, args: string[], cwd: string, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const forward = (chunk: Buffer, stream: NodeJS.WriteStream) => {
      const text = chunk.toString();
      out += stream === process.stdout ? text : "";
      for (const line of text.split("\n")) if (line) stream.write(`${prefix} ${line}\n`);
    };
    child.stdout.on("data", (c: Buffer) => forward(c, process.stdout));
    child.stderr.on("data", (c: Buffer) => forward(c, process.stderr));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} in ${cwd} exited ${code}`))));
  });
}

/** The other commit's node_modules: a hard-linked copy of this one's (its build cache left out) when the lockfiles agree. */
async function installModules(dir: string) {
  const same =
    existsSync(path.join(dir, "package-lock.json")) &&
    readFileSync(path.join(dir, "package-lock.json"), "utf8") === readFileSync(path.join(root, "package-lock.json"), "utf8");
  if (same) {
    log("same package-lock.json: node_modules as a hard-linked copy");
    await run("cp", ["-al", path.join(root, "node_modules"), path.join(dir, "node_modules")], dir, "[cp]");
    // Next's build cache and the build lock are this checkout's own (a hard link would share them).
    rmSync(path.join(dir, "node_modules", ".cache"), { recursive: true, force: true });
  } else {
    log("package-lock.json differs: npm ci in the other checkout");
    await run("npm", ["ci", "--no-audit", "--no-fund"], dir, "[npm ci]");
  }
}

async function benchIn(label: string, cwd: string, kinds: string[]): Promise<BenchRun> {
  mkdirSync(path.join(cwd, ".test-data"), { recursive: true });
  const out = await run(path.join(root, "node_modules", ".bin", "tsx"), ["bench/run.ts", ...kinds], cwd, `[${label}]`);
  const line = out
    .split("\n")
    .reverse()
    .find((l) => l.startsWith('{"bench":"dispatch"'));
  return { label, result: line ? (JSON.parse(line) as Record<string, unknown>) : null };
}

const fmt = (v: unknown) => (typeof v === "number" ? v.toLocaleString("en-US") : v === undefined || v === null ? "n/a" : JSON.stringify(v));

/** The figures of both runs, one table per database (a Markdown table: it goes into docs/benchmarks.md as it is). */
export function sideBySide(before: BenchRun, after: BenchRun, kinds: string[]): string {
  const lines: string[] = [];
  for (const kind of kinds) {
    const a = (before.result?.[kind] ?? {}) as Figures;
    const b = (after.result?.[kind] ?? {}) as Figures;
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => typeof a[k] === "number" || typeof b[k] === "number");
    lines.push("", `${kind}:`, "", `| figure | ${before.label} | ${after.label} | ratio |`, "|---|---|---|---|");
    for (const k of keys) {
      const x = a[k];
      const y = b[k];
      const ratio = typeof x === "number" && typeof y === "number" && x !== 0 ? `${(y / x).toFixed(2)}×` : "";
      lines.push(`| ${k} | ${fmt(x)} | ${fmt(y)} | ${ratio} |`);
    }
    if (a.error || b.error) lines.push(`| error | ${fmt(a.error)} | ${fmt(b.error)} | |`);
  }
  const load = (r: BenchRun) => JSON.stringify((r.result?.machine as Figures | undefined) ?? null);
  lines.push("", `machine, ${before.label}: ${load(before)}`, `machine, ${after.label}: ${load(after)}`);
  return lines.join("\n");
}

export async function mainCompare(args: string[]) {
  const [ref, only] = args;
  if (!ref) throw new Error("usage: npm run bench -- compare <ref> [pglite|postgres]");
  const kinds = (["pglite", "postgres"] as const).filter((k) => !only || k === only);
  if (kinds.length === 0) throw new Error(`unknown database "${only}": pglite or postgres`);
  const sha = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  const head = git(["rev-parse", "--short", "HEAD"]) + (git(["status", "--porcelain", "--untracked-files=no"]) ? "+changes" : "");
  const dir = mkdtempSync(path.join(os.tmpdir(), "gcs-bench-ref-"));
  log(`${ref} (${sha.slice(0, 7)}) in ${dir}, then this checkout (${head})`);
  git(["worktree", "add", "--detach", dir, sha]);
  try {
    await installModules(dir);
    // bench/run.ts takes one database name or none (both): naming both ran only the first.
    const arg = only ? [only] : [];
    const before = await benchIn(`${ref} (${sha.slice(0, 7)})`, dir, arg);
    const after = await benchIn(`this (${head})`, root, arg);
    console.log(sideBySide(before, after, [...kinds]));
    console.log(JSON.stringify({ bench: "compare", before, after }));
  } finally {
    try {
      git(["worktree", "remove", "--force", dir]);
    } catch (err) {
      log(`could not remove the worktree: ${err instanceof Error ? err.message : String(err)}`);
      rmSync(dir, { recursive: true, force: true });
      git(["worktree", "prune"]);
    }
  }
}
