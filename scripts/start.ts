/**
 * `npm start` (docs/decisions.md#running-the-service): builds on first start, then runs the server process (.next/serve.cjs,
 * scripts/serve.ts) on PORT.
 * The server migrates the database itself at boot (instrumentation.ts).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isAlive } from "../db/process-alive";
import { env, validateEnv } from "../server/env";
import { ensureBuild } from "./ensure-build";
import { serverArgs } from "../boot/serve-args";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function dataLocation(): string {
  if (!env.databaseUrl) return `embedded PGlite in ${env.dataDir}`;
  try {
    const url = new URL(env.databaseUrl);
    return `PostgreSQL at ${url.host}${url.pathname}`;
  } catch {
    return "PostgreSQL (DATABASE_URL)";
  }
}

/**
 * The launcher processes above this one (tsx, `sh -c`, npm). Killing npm alone kills its `sh -c`,
 * which does not pass the signal on: without this watch the server would be left running. Linux only.
 */
function launcherPids(): number[] {
  const pids: number[] = [];
  let pid = process.ppid;
  try {
    while (pid > 1 && pids.length < 5) {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (!/\b(tsx|npm|npm-cli\.js)\b|^(\/\S+\/)?(sh|bash|dash) -c /.test(cmdline)) break;
      pids.push(pid);
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    }
  } catch {
    // no /proc: rely on signals alone
  }
  return pids;
}

async function main() {
  validateEnv();
  const port = env.port;
  const appUrl = env.appUrl;
  // next-auth must call itself by the public address; an explicit NEXTAUTH_URL still wins.
  const childEnv = { ...process.env, PORT: String(port), NEXTAUTH_URL: process.env.NEXTAUTH_URL ?? appUrl };

  await ensureBuild();

  console.log(
    [
      "",
      `  Group campaigns service`,
      `  URL       ${appUrl}   (listening on port ${port})`,
      `  API docs  ${appUrl}/docs`,
      `  Data      ${dataLocation()}`,
      "",
    ].join("\n"),
  );

  // Node runs the server directly (no npx): a signal reaches it, and no orphan is left behind.
  const child = spawn(process.execPath, serverArgs({ port }), {
    cwd: root,
    stdio: "inherit",
    env: childEnv,
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  const launchers = launcherPids();
  const watch = setInterval(() => {
    if (launchers.every(isAlive)) return;
    clearInterval(watch);
    console.log("[start] the npm process that started the server is gone: stopping the server");
    child.kill("SIGTERM");
  }, 1000);
  watch.unref();
  child.on("exit", (code, signal) => {
    process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
