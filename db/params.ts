import { sql, type Column, type Placeholder, type SQL } from "drizzle-orm";

/**
 * A value a statement builder takes either as itself or as a placeholder of a statement prepared once
 * (preparedPerDb), bound when it runs. Hot statements are built with placeholders so that drizzle's query
 * building (a fraction of a millisecond of CPU per fragment) happens once per process, not once per call.
 */
export type Bind<T> = T | Placeholder;
/** A moment: a Date, or a placeholder bound to its ISO string (isoOf). */
export type At = Bind<Date>;
/** The ISO string of a moment, or the placeholder that stands for it. */
export const isoOf = (at: At): string | Placeholder => (at instanceof Date ? at.toISOString() : at);

/**
 * `column IN (values)` with the values as ONE JSON parameter instead of one parameter each: hot paths
 * pass a loop's hundred keys, and building and binding a parameter per key costs more than the lookup.
 * Works the same on PGlite and postgres-js (no array-type inference involved).
 */
export function inJson(column: Column | SQL, values: readonly (string | number)[]): SQL {
  // `= any(array(…))`, not `in (select …)`: an array is an index condition (a semi-join over a
  // function's rows was planned as a scan of every row of the table, seconds on a large campaign).
  return sql`${column} = any(array(select json_array_elements_text(${JSON.stringify(values)}::json)))`;
}

/** Row count of an INSERT/UPDATE/DELETE run with db.execute, on either driver (postgres-js: `count`; PGlite: `affectedRows`). */
export function affectedRows(result: unknown): number {
  const r = result as { count?: number; affectedRows?: number };
  return Number(r.count ?? r.affectedRows ?? 0);
}

/** The rows of a SELECT (or RETURNING) run with db.execute, on either driver (postgres-js: the result; PGlite: `rows`). */
export function rowsOf<T>(result: unknown): T[] {
  const r = result as { rows?: T[] };
  return Array.isArray(result) ? (result as T[]) : (r.rows ?? []);
}

/**
 * A statement built and prepared once per database handle. Hot requests skip drizzle's query building
 * (a third of a millisecond of CPU per statement), and PostgreSQL plans the statement once per
 * connection instead of on every call.
 */
export function preparedPerDb<D extends object, T>(build: (db: D) => T): (db: D) => T {
  const cache = new WeakMap<D, T>();
  return (db) => {
    let statement = cache.get(db);
    if (!statement) {
      statement = build(db);
      cache.set(db, statement);
    }
    return statement;
  };
}
