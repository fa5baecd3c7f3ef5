import { getTableName, sql, type SQL, type Table } from "drizzle-orm";

/**
 * A row source inside a statement (a table under an alias, a CTE, a derived table) that knows its name and its
 * columns. SQL fragments shared between statements take one instead of an alias string: `r.col("total")` is
 * `c.total` when the statement calls its row `c`, and a column the source does not have is a compile error, not a
 * statement that fails at run time (docs/architecture.md, "A hot statement").
 */
export interface Relation<C extends string> {
  /** Its name in the statement: `c`, `locked`, `"campaigns"`. */
  readonly name: SQL;
  /** One of its columns, qualified by the name (a property, not a method: a relation lacking a column a fragment needs does not fit it). */
  readonly col: (column: C) => SQL;
}

/** A relation of `columns` (SQL names; or given as the type argument) called `name` in the statement: a CTE's, or a derived table's. */
export function relation<const C extends string>(name: string, _columns?: readonly C[]): Relation<C> {
  return { name: sql.raw(name), col: (column) => sql.raw(`${name}.${column}`) };
}

/** The SQL column names of a drizzle table. */
export type SqlColumnsOf<T extends Table> = T["_"]["columns"][keyof T["_"]["columns"]]["_"]["name"];

/**
 * `table` under `alias` (its own name when none is given) in a statement, its columns those of the schema (their
 * SQL names): `tableAs(channels, "c").col("health_state")`.
 */
export function tableAs<T extends Table>(table: T, alias?: string): Relation<SqlColumnsOf<T>> {
  const name = alias ?? `"${getTableName(table)}"`;
  return { name: sql.raw(name), col: (column) => sql.raw(`${name}.${column}`) };
}
