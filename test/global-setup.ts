import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openDatabase } from "../db/client";
import { baseDatabaseUrl, databaseName, dropDatabase, dropLeftovers, recreateDatabase, templateUrl } from "./postgres-databases";

/**
 * Uncompressed: every test file loads it, and gunzipping 5 MB into 44 MB took about a third of the 1 s of CPU each
 * file's PGlite spent opening it (docs/testing.md, "Where CI time goes").
 */
export const snapshotPath = path.resolve(".test-data/pglite-snapshot.tar");

/**
 * Migrates once per run what every test file starts from: on PostgreSQL the template database
 * `<db>_template` (test/postgres-databases.ts), on PGlite a snapshot. Returns the teardown.
 */
export default async function setup() {
  const started = Date.now();
  const base = baseDatabaseUrl();
  let teardown = async () => {};
  if (base) {
    await dropLeftovers(base);
    const template = await recreateDatabase(base, `${databaseName(base)}_template`);
    const db = await openDatabase({ url: template });
    await db.close();
    teardown = async () => {
      // The files' databases whose drop (dropDatabaseLater) has not happened yet, then the template.
      await dropLeftovers(base);
      await dropDatabase(base, templateUrl(base));
    };
  } else {
    const { PGlite } = await import("@electric-sql/pglite");
    const { drizzle } = await import("drizzle-orm/pglite");
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    const client = await PGlite.create();
    await migrate(drizzle(client), { migrationsFolder: path.resolve("db/migrations") });
    const dump = await client.dumpDataDir("none");
    mkdirSync(path.dirname(snapshotPath), { recursive: true });
    writeFileSync(snapshotPath, Buffer.from(await dump.arrayBuffer()));
    await client.close();
  }
  console.log(`[test] database ready (${base ? "postgres template" : "pglite snapshot"}) in ${Date.now() - started} ms`);
  return teardown;
}
