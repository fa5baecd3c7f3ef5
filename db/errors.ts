/** drizzle wraps driver errors; the PostgreSQL code sits on the cause with both drivers. */
export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.cause?.code ?? e?.code;
}

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === "23505";

import { sql } from "drizzle-orm";

/** A timestamp inside a raw sql`` fragment: postgres-js does not serialise Date parameters there, PGlite does. */
export const tsParam = (d: Date) => sql`${d.toISOString()}::timestamptz`;

/**
 * Dispatch bookkeeping commits without waiting for the WAL flush. Safe for exactly-once: only a crash of
 * the database server itself could lose the last few hundred milliseconds of marks, and a delivery
 * that lost its `sent` mark is reconciled with the provider (by delivery key) before any resend.
 */
export const asyncCommit = sql`set local synchronous_commit = off`;
