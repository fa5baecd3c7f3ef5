import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";

/**
 * tRPC error codes and the HTTP statuses they stand for, one table both ways: the REST envelope reads
 * a tRPC error's status from it (envelope.ts), and a domain error thrown in a procedure gets its tRPC
 * code from it (server/trpc.ts), so the dashboard (tRPC) and the REST facade agree.
 */
export const trpcStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  CONFLICT: 409,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Partial<Record<TRPC_ERROR_CODE_KEY, number>>;

const codeByStatus = new Map<number, TRPC_ERROR_CODE_KEY>(Object.entries(trpcStatus).map(([code, status]) => [status, code as TRPC_ERROR_CODE_KEY]));

/** The tRPC code for an HTTP status; undefined for a status with no code of its own (500 then). */
export const trpcCodeFor = (status: number): TRPC_ERROR_CODE_KEY | undefined => codeByStatus.get(status);
