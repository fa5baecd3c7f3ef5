/**
 * `npm test` (docs/decisions.md#running-the-service): type check, lint and architecture rules (biome, dependency-cruiser),
 * vitest, then the Playwright e2e suite, and one line at
 * the end, `tests: N passed, M failed[, K skipped]`. Exits non-zero when anything failed or nothing ran;
 * a failing lint or architecture check counts as one failed test.
 * DATABASE_URL passes through: set, every stage runs on PostgreSQL; unset, on embedded PGlite.
 * TEST_SKIP_STATIC=1 leaves out the type check and lint (they do not depend on the database): .ci/run sets it
 * for its PostgreSQL run, after the PGlite run checked the same tree.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { newestSourceMtime, typecheckedEnv } from "./ensure-build";
import { lastLines, unhandledErrors } from "./test-output";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (p: string) => path.join(root, "node_modules", p);
/** What dependency-cruiser reads (tests and harnesses are excluded in .dependency-cruiser.cjs). */
const archRoots = ["app", "server", "db", "inngest", "scripts", "instrumentation.ts"];

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

interface StageResult {
  name: string;
  ok: boolean;
  seconds: number;
  note: string;
}

const stages: StageResult[] = [];
const total: Counts = { passed: 0, failed: 0, skipped: 0 };
/** What failed, one line each, repeated in the summary (and by .ci/run after both runs) so the end of a log names it. */
const failures: string[] = [];

/** Runs a command with the project's environment; `onOutput` sees stdout and stderr while they are also shown. */
function run(args: string[], onOutput?: (chunk: string) => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: process.env,
      stdio: ["ignore", onOutput ? "pipe" : "inherit", onOutput ? "pipe" : "inherit"],
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      onOutput?.(chunk.toString("utf8"));
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      onOutput?.(chunk.toString("utf8"));
    });
    child.on("error", (err) => {
      console.error(`[test] could not start ${args.join(" ")}: ${err.message}`);
      resolve(1);
    });
    child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** The last `max` characters of a stream, kept while it runs. */
function tailKeeper(max: number) {
  let text = "";
  return {
    add: (chunk: string) => {
      text = (text + chunk).slice(-max);
    },
    text: () => text,
  };
}

async function stage(name: string, body: () => Promise<{ ok: boolean; note: string }>) {
  console.log(`\n[test] ── ${name} ──`);
  const started = Date.now();
  const { ok, note } = await body();
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  stages.push({ name, ok, seconds, note });
  console.log(`[test] ${name}: ${note} (${seconds} s)`);
}

async function typecheck() {
  // Next.js's route types first (.next/types, as `next build` writes them; about 2 s): tsc then checks the pages against
  // them as the build's own TypeScript step does, and the e2e stage's build skips that step for this tree (ensure-build.ts).
  // Read before: a source edited while tsc runs makes the build check again.
  const sources = String(newestSourceMtime());
  const generated = await run([bin("next/dist/bin/next"), "typegen"]);
  const code = generated === 0 ? await run([bin("typescript/bin/tsc"), "--noEmit"]) : generated;
  if (code === 0) process.env[typecheckedEnv] = sources;
  return { ok: code === 0, note: code === 0 ? "no type errors" : `${generated === 0 ? "tsc" : "next typegen"} exited with ${code}` };
}

/** The commands of `npm run lint` (biome: lint + format check) and `npm run lint:arch` (dependency-cruiser). */
const lintCommands: { name: string; args: string[] }[] = [
  { name: "biome check", args: [bin("@biomejs/biome/bin/biome"), "check", "--colors=off", "."] },
  { name: "dependency-cruiser", args: [bin("dependency-cruiser/bin/dependency-cruise.mjs"), "--config", ".dependency-cruiser.cjs", ...archRoots] },
];

async function lintAndArchitecture() {
  const failed: string[] = [];
  for (const { name, args } of lintCommands) {
    const code = await run(args);
    if (code !== 0) failed.push(`${name} exited with ${code}`);
  }
  total.failed += failed.length;
  failures.push(...failed);
  return { ok: failed.length === 0, note: failed.length ? `${failed.join("; ")} (each counted as 1 failure)` : "no findings" };
}

async function vitest() {
  const report = path.join(root, ".test-data", "vitest-report.json");
  mkdirSync(path.dirname(report), { recursive: true });
  rmSync(report, { force: true });
  const output = tailKeeper(400_000);
  const code = await run([bin("vitest/vitest.mjs"), "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`], output.add);
  const unhandled = unhandledErrors(output.text());
  failures.push(...unhandled);
  if (!existsSync(report)) {
    total.failed += 1;
    if (unhandled.length === 0) failures.push(`vitest exited with ${code} and wrote no report`);
    return { ok: false, note: `vitest exited with ${code} and wrote no report (counted as 1 failure)` };
  }
  const r = JSON.parse(readFileSync(report, "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults: {
      name: string;
      status: string;
      message?: string;
      assertionResults: { status: string; fullName?: string; failureMessages?: string[] }[];
    }[];
  };
  for (const f of r.testResults) {
    const file = path.relative(root, f.name);
    for (const a of f.assertionResults.filter((x) => x.status === "failed")) {
      failures.push(`vitest ${file} › ${a.fullName ?? "?"}: ${firstLine(a.failureMessages?.[0])}`);
    }
    if (f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")) failures.push(`vitest ${file}: ${firstLine(f.message)}`);
  }
  // A file that fails to load or in a hook fails without a failed test: count each such file once.
  const brokenFiles = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"));
  let failed = r.numFailedTests + brokenFiles.length;
  let extra = brokenFiles.length
    ? `; ${brokenFiles.length} file(s) failed outside any test, counted as failures: ${brokenFiles.map((f) => path.relative(root, f.name)).join(", ")}`
    : "";
  if (code !== 0 && failed === 0) {
    failed = 1;
    extra = `; vitest exited with ${code} without a failed test (${unhandled.length ? "an unhandled error" : "no unhandled error printed"}), counted as 1 failure`;
    if (unhandled.length === 0) failures.push(`vitest exited with ${code} without a failed test or an unhandled error in its output`);
  }
  const counts = { passed: r.numPassedTests, failed, skipped: r.numPendingTests + r.numTodoTests };
  add(counts);
  return { ok: code === 0 && failed === 0, note: describe(counts) + extra };
}

async function e2e() {
  const script = path.join(root, "scripts", "e2e.ts");
  if (!existsSync(script)) return { ok: true, note: "SKIPPED: scripts/e2e.ts does not exist yet, no e2e tests ran" };
  const output = tailKeeper(64_000);
  const code = await run([bin("tsx/dist/cli.mjs"), script], output.add);
  const tail = output.text();
  for (const m of tail.matchAll(/^\[e2e\].*✗ (.*)$/gm)) failures.push(`e2e ${m[1]}`);
  const matches = [...tail.matchAll(/^e2e: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/gm)];
  const last = matches.at(-1);
  const counts = last ? { passed: Number(last[1]), failed: Number(last[2]), skipped: Number(last[3] ?? 0) } : { passed: 0, failed: 0, skipped: 0 };
  let extra = "";
  if (code !== 0 && counts.failed === 0) {
    counts.failed = 1;
    extra = `; e2e runner exited with ${code}${last ? "" : " without its summary line"} (counted as 1 failure)`;
    failures.push(`e2e runner exited with ${code} without a failed test${last ? "" : " or its summary line"}: ${lastLines(tail, 3)}`);
  } else if (!last) {
    extra = "; the e2e runner printed no `e2e: N passed, M failed` line";
  }
  add(counts);
  return { ok: code === 0 && counts.failed === 0, note: describe(counts) + extra };
}

function add(c: Counts) {
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
}

function firstLine(text: string | undefined) {
  return (
    (text ?? "")
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim()
      .slice(0, 300) ?? ""
  );
}

function describe(c: Counts) {
  return `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ""}`;
}

async function main() {
  const database = process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "embedded PGlite";
  console.log(`[test] database: ${database}`);
  if (process.env.TEST_SKIP_STATIC === "1") {
    // .ci/run's second run (PostgreSQL): the same tree was type-checked and linted by its first run.
    console.log("\n[test] typecheck and lint: not run again (TEST_SKIP_STATIC=1; .ci/run ran them with the PGlite run)");
  } else {
    await stage("typecheck (tsc --noEmit)", typecheck);
    await stage("lint and architecture (biome, dependency-cruiser)", lintAndArchitecture);
  }
  await stage("unit and API tests (vitest)", vitest);
  await stage("end-to-end (scripts/e2e.ts)", e2e);

  console.log("\n[test] summary");
  for (const s of stages) console.log(`  ${s.ok ? "ok  " : "FAIL"}  ${s.name}: ${s.note} (${s.seconds} s)`);
  for (const f of failures) console.log(`  failed: ${f}`);
  const ran = total.passed + total.failed;
  if (ran === 0) console.log("  FAIL  no tests ran");
  const failed = stages.some((s) => !s.ok) || total.failed > 0 || ran === 0;
  console.log(`tests: ${describe({ ...total })}`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  console.log(`tests: ${describe(total)}`);
  process.exit(1);
});
