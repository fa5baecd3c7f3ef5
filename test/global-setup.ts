import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openDatabase } from "../db/client";

export const snapshotPath = path.resolve(".test-data/pglite-snapshot.tar.gz");

/** Migrates once per run: PostgreSQL in place, PGlite into a snapshot each test file starts from. */
export default async function setup() {
  const started = Date.now();
  if (process.env.DATABASE_URL) {
    const db = await openDatabase({ url: process.env.DATABASE_URL });
    await db.close();
  } else {
    const { PGlite } = await import("@electric-sql/pglite");
    const { drizzle } = await import("drizzle-orm/pglite");
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    const client = await PGlite.create();
    await migrate(drizzle(client), { migrationsFolder: path.resolve("db/migrations") });
    const dump = await client.dumpDataDir("gzip");
    mkdirSync(path.dirname(snapshotPath), { recursive: true });
    writeFileSync(snapshotPath, Buffer.from(await dump.arrayBuffer()));
    await client.close();
  }
  console.log(`[test] database ready (${process.env.DATABASE_URL ? "postgres" : "pglite"}) in ${Date.now() - started} ms`);
}
