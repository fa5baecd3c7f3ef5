/** drizzle wraps driver errors; the PostgreSQL code sits on the cause with both drivers. */
export function pgErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.cause?.code ?? e?.code;
}

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === "23505";
