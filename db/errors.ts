/** drizzle wraps driver errors; the PostgreSQL code sits on the cause with both drivers. */
export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.cause?.code ?? e?.code;
}

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === "23505";

import { sql } from "drizzle-orm";
import { isoOf, type At } from "./params";

/**
 * A timestamp inside a raw sql`` fragment: postgres-js does not serialise Date parameters there, PGlite does.
 * `d` may be a placeholder of a prepared statement (bound to an ISO string: db/params.ts `At`).
 */
export const tsParam = (d: At) => sql`${isoOf(d)}::timestamptz`;

/**
 * Dispatch bookkeeping commits without waiting for the WAL flush. Safe for exactly-once: only a crash of
 * the database server itself could lose the last few hundred milliseconds of marks, and a delivery
 * that lost its `sent` mark is reconciled with the provider (by delivery key) before any resend.
 */
export const asyncCommit = sql`set local synchronous_commit = off`;

/**
 * asyncCommit as a column of the final SELECT of a statement that runs alone (its own transaction):
 * `select ${asyncCommitColumn}, …`. `set_config(…, true)` lasts until the commit.
 */
export const asyncCommitColumn = sql`set_config('synchronous_commit', 'off', true)`;

/**
 * asyncCommit for a statement that runs alone (its own transaction), as a condition that is always true:
 * `set_config(…, true)` lasts until the commit. An uncorrelated subquery, so PostgreSQL evaluates it once,
 * before the first row (a one-time filter). For writes whose last ~0.6 s may be lost in a crash of the
 * database server (never half of one: a transaction commits whole or not at all), still WAL-logged and
 * replicated; in a caller's transaction it makes that whole transaction's commit asynchronous.
 */
export const commitWithoutFlush = sql`(select ${asyncCommitColumn}) = 'off'`;

/**
 * The database connection was lost under the statement: the server terminated the session (57P01–57P03,
 * class 08), or the `postgres` driver found its socket closed or reset. The driver opens a new connection
 * for the next query, so an idempotent statement can simply run again.
 */
export function isConnectionLost(err: unknown): boolean {
  const code = pgErrorCode(err);
  if (!code) return false;
  return (
    code.startsWith("08") ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03" ||
    code === "CONNECTION_CLOSED" ||
    code === "CONNECTION_ENDED" ||
    code === "CONNECTION_DESTROYED" ||
    code === "CONNECT_TIMEOUT" ||
    code === "ECONNRESET" ||
    code === "ECONNREFUSED" ||
    code === "EPIPE"
  );
}

/**
 * Runs `fn` again (up to `attempts` times in all, a short pause between) when the connection was lost
 * under it. Only for idempotent work: a statement whose commit was acknowledged by nobody may have
 * committed, and `fn` must then find nothing left to do (the dispatch writes are compare-and-set).
 */
export async function retryOnConnectionLoss<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isConnectionLost(err)) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}
