import { inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "./client";
import { rowsOf } from "./params";
import { tenants } from "./schema";

// PostgreSQL only: PGlite runs each statement in-process, with no prepared statements kept per connection.
const onPostgres = Boolean(process.env.DATABASE_URL);

describe.runIf(onPostgres)("statements a PostgreSQL connection keeps prepared", () => {
  it("keeps one statement per fixed text (a constant short list too), none for a text whose length follows a list (inArray of 5+, rows of VALUES)", async () => {
    const db = await getDb();
    const kept = await db.transaction(async (tx) => {
      // One connection: a transaction's statements run on one, and pg_prepared_statements is that session's.
      const before = await tx.execute(sql`select count(*)::int as n from pg_prepared_statements`);
      for (let n = 5; n <= 44; n++) {
        const ids = Array.from({ length: n }, (_, i) => `tenant_none_${i}`);
        expect(await tx.select({ id: tenants.id }).from(tenants).where(inArray(tenants.id, ids))).toEqual([]);
        // Fixed texts run again and again, a constant short list among them: each prepared once.
        await tx.select({ id: tenants.id }).from(tenants).where(sql`${tenants.id} = ${ids[0]}`);
        await tx
          .select({ id: tenants.id })
          .from(tenants)
          .where(inArray(tenants.id, ["tenant_a", "tenant_b"]));
      }
      // Rows of VALUES, their number changing: as many texts as lengths.
      for (let n = 2; n <= 11; n++) {
        const rows = sql.join(
          Array.from({ length: n }, (_, i) => sql`(${i}::int, ${`v${i}`}::text)`),
          sql`, `,
        );
        await tx.execute(sql`select count(*) from (values ${rows}) as v(a, b)`);
      }
      const after = await tx.execute(sql`select count(*)::int as n from pg_prepared_statements`);
      const count = (r: unknown) => rowsOf<{ n: number }>(r)[0].n;
      return count(after) - count(before);
    });
    // The two fixed texts; 40 list lengths and 10 VALUES lengths would have been 50 more.
    expect(kept).toBe(2);
  });
});
