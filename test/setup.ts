import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type Database, openDatabase, setDatabase } from "../db/client";
import { snapshotPath } from "./global-setup";
import { baseDatabaseUrl, createFileDatabase, dropDatabaseLater } from "./postgres-databases";

// Each test file (its own process) gets its own database: a PGlite copy of the migrated snapshot, or
// on PostgreSQL a database copied from the migrated template (test/postgres-databases.ts). DATABASE_URL
// then names the file's database, so the processes a test starts (the admin CLI) use it too.
process.env.DATA_DIR ??= path.resolve(".test-data/data");
process.env.WEBHOOK_ALLOW_PRIVATE ??= "1";
// Cheap password hashes for the many throwaway accounts (read only when NODE_ENV=test; see
// server/auth/password.ts): N=2^10 costs a few milliseconds where 2^15 took about 0.1 s (close to a second
// on a loaded 2-core machine), for each of the hundreds of tenants a run signs up. test/auth/sign-in.test.ts
// deletes it to test the real parameters.
process.env.PASSWORD_SCRYPT_N_FOR_TESTS ??= String(2 ** 10);
const base = baseDatabaseUrl();
let fileDatabaseUrl: string | undefined;
// On PostgreSQL the file's database is copied from the template while the test file's modules load (0.4–0.6 s); it
// exists before any hook or test runs (the beforeAll below comes first) and before the first query (open()).
let created: Promise<void> = Promise.resolve();
if (base) {
  ({ url: fileDatabaseUrl, created } = createFileDatabase(base));
  created.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
  process.env.DATABASE_URL = fileDatabaseUrl;
}
beforeAll(() => created);
let opened: Promise<Database> | undefined;
const open = () =>
  (opened ??= fileDatabaseUrl
    ? created.then(() => openDatabase({ url: fileDatabaseUrl, migrate: false }))
    : openDatabase({ loadDataDir: new Blob([readFileSync(snapshotPath)]), migrate: false }));
// Opened at its first use: a file that never touches the database (a unit test) does not start PGlite (about 1 s of
// CPU: its WebAssembly compiled, the snapshot loaded).
setDatabase({
  // biome-ignore lint/suspicious/noThenProperty: a promise of the database, started when first awaited
  then: (ok, fail) => open().then(ok, fail),
  catch: (fail) => open().catch(fail),
  finally: (f) => open().finally(f),
  [Symbol.toStringTag]: "Promise",
});

afterAll(async () => {
  if (opened) await (await opened).close();
  // Not waited for: the drop's checkpoint would hold this worker for seconds (test/postgres-databases.ts).
  if (base && fileDatabaseUrl) dropDatabaseLater(base, fileDatabaseUrl);
});
