import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { isAlive } from "../db/process-alive";

/**
 * Per-test-file PostgreSQL databases (docs/testing.md, "Database"). With DATABASE_URL set, the global
 * setup migrates `<db>_template` once per run; each test file (its own process: vitest's forks pool)
 * creates `<db>_w<pid>_<n>` from it with CREATE DATABASE … TEMPLATE, points DATABASE_URL at it, and
 * drops it at the end. So a file sees only its own rows: counts are exact and no other file's engine
 * picks up its campaigns or webhooks. The e2e suite keeps DATABASE_URL as it is.
 */

/** The run's DATABASE_URL as the user gave it (test/setup.ts repoints DATABASE_URL at the file's own database). */
export function baseDatabaseUrl(): string | undefined {
  // process.env stores strings: assigning undefined would store "undefined".
  if (process.env.GCS_TEST_BASE_DATABASE_URL === undefined && process.env.DATABASE_URL) process.env.GCS_TEST_BASE_DATABASE_URL = process.env.DATABASE_URL;
  return process.env.GCS_TEST_BASE_DATABASE_URL || undefined;
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

export const databaseName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));
export const templateUrl = (base: string) => withDatabase(base, `${databaseName(base)}_template`);
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Runs `body` on a connection to the server's `postgres` database (CREATE/DROP DATABASE cannot run inside the target). */
async function onServer<T>(base: string, body: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(withDatabase(base, "postgres"), { max: 1, onnotice: () => {} });
  try {
    return await body(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function recreateDatabase(base: string, name: string): Promise<string> {
  await onServer(base, async (sql) => {
    await sql.unsafe(`drop database if exists ${ident(name)} with (force)`);
    await sql.unsafe(`create database ${ident(name)}`);
  });
  return withDatabase(base, name);
}

let created = 0;

/**
 * A new database for this process's test file, copied from the migrated template: its URL at once, and `created`, when
 * it exists (test/setup.ts lets the file's imports run meanwhile).
 */
export function createFileDatabase(base: string): { url: string; created: Promise<void> } {
  const name = `${databaseName(base)}_w${process.pid}_${++created}`;
  const done = onServer(base, async (sql) => {
    await sql.unsafe(`drop database if exists ${ident(name)} with (force)`);
    // Two files copying the template at the same moment: PostgreSQL refuses the second while the first
    // holds the template ("being accessed by other users"); it is a matter of milliseconds.
    for (let attempt = 0; ; attempt++) {
      try {
        await sql.unsafe(`create database ${ident(name)} template ${ident(`${databaseName(base)}_template`)}`);
        return;
      } catch (err) {
        if (attempt >= 50 || !String((err as Error).message).includes("being accessed by other users")) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  return { url: withDatabase(base, name), created: done };
}

export async function dropDatabase(base: string, url: string): Promise<void> {
  await onServer(base, (sql) => sql.unsafe(`drop database if exists ${ident(databaseName(url))} with (force)`));
}

/** What dropDatabaseLater's process runs: one statement on the server's `postgres` database, errors ignored. */
const dropScript = `import postgres from "postgres";
const sql = postgres(process.argv[1], { max: 1, onnotice: () => {} });
await sql.unsafe(process.argv[2]).catch(() => {});
await sql.end({ timeout: 5 });`;

/**
 * Drops a file's database from a detached process, so the file does not wait for it: DROP DATABASE makes PostgreSQL
 * (15) take a checkpoint, 1–6 s on a loaded 2-core machine, that every file waited for in its afterAll (docs/testing.md,
 * "Where CI time goes"). A drop that did not happen is done by the global teardown (dropLeftovers), as after a killed run.
 */
export function dropDatabaseLater(base: string, url: string): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const statement = `drop database if exists ${ident(databaseName(url))} with (force)`;
  spawn(process.execPath, ["--input-type=module", "-e", dropScript, withDatabase(base, "postgres"), statement], {
    cwd: root,
    detached: true,
    stdio: "ignore",
  }).unref();
}

/** Databases a killed run (or dropDatabaseLater's drops still under way) left behind: `<db>_w<pid>_<n>` whose process is gone. */
export async function dropLeftovers(base: string): Promise<void> {
  const prefix = `${databaseName(base)}_w`;
  await onServer(base, async (sql) => {
    const rows = await sql<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${prefix})`;
    for (const { datname } of rows) {
      const pid = Number(datname.slice(prefix.length).split("_")[0]);
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
      await sql.unsafe(`drop database if exists ${ident(datname)} with (force)`);
    }
  });
}
