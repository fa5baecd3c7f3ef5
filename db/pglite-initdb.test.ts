import { sql } from "drizzle-orm";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "./client";

const dirs: string[] = [];
function freshDataDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gcs-initdb-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("an embedded database in a new DATA_DIR", () => {
  it("is created (initdb in a child process), migrated, and opens again", async () => {
    const dataDir = freshDataDir();
    const first = await openDatabase({ dataDir });
    await first.db.execute(sql`insert into tenants (id, name) values ('t1', 'A')`);
    await first.close();
    expect(existsSync(path.join(dataDir, "pglite", "PG_VERSION"))).toBe(true);
    expect(readdirSync(dataDir).filter((e) => e.startsWith(".initdb-"))).toEqual([]);

    const again = await openDatabase({ dataDir });
    const rows = await again.db.execute<{ n: number }>(sql`select count(*)::int as n from tenants`);
    await again.close();
    expect((rows as unknown as { rows: { n: number }[] }).rows[0].n).toBe(1);
  }, 60_000);

  it("discards what a process killed during initdb left, and starts over", async () => {
    const dataDir = freshDataDir();
    // A killed initdb leaves its staging directory; the database directory itself was never made.
    mkdirSync(path.join(dataDir, ".initdb-424242", "base"), { recursive: true });
    writeFileSync(path.join(dataDir, ".initdb-424242", "PG_VERSION"), "17\n");
    const database = await openDatabase({ dataDir });
    await database.db.execute(sql`select 1 from tenants limit 1`);
    await database.close();
    expect(readdirSync(dataDir).filter((e) => e.startsWith(".initdb-"))).toEqual([]);
  }, 60_000);

  it("refuses a database directory that holds files but no cluster, and leaves them as they are", async () => {
    const dataDir = freshDataDir();
    mkdirSync(path.join(dataDir, "pglite"));
    writeFileSync(path.join(dataDir, "pglite", "notes.txt"), "mine");
    await expect(openDatabase({ dataDir })).rejects.toThrow(/holds files but no database \(no PG_VERSION\)/);
    expect(readdirSync(path.join(dataDir, "pglite"))).toEqual(["notes.txt"]);
    expect(readdirSync(dataDir).filter((e) => e.startsWith(".initdb-"))).toEqual([]);
  }, 60_000);
});
