import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";
import { openDatabase, setDatabase } from "../db/client";

// Each test file (its own process) gets its own database: a PGlite copy of the migrated snapshot,
// or the shared PostgreSQL test database, where every test makes its own tenants.
process.env.DATA_DIR ??= path.resolve(".test-data/data");
process.env.WEBHOOK_ALLOW_PRIVATE ??= "1";
// Cheaper password hashes for the many throwaway accounts (read only when NODE_ENV=test; see
// server/auth/password.ts). test/auth/sign-in.test.ts deletes it to test the real parameters.
process.env.PASSWORD_SCRYPT_N_FOR_TESTS ??= String(2 ** 15);
const database = process.env.DATABASE_URL
  ? openDatabase({ url: process.env.DATABASE_URL, migrate: false })
  : openDatabase({
      loadDataDir: new Blob([readFileSync(path.resolve(".test-data/pglite-snapshot.tar.gz"))]),
      migrate: false,
    });
setDatabase(database);

afterAll(async () => {
  await (await database).close();
});
