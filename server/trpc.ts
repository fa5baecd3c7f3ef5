import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { Db } from "../db/client";
import { DomainError, Forbidden, Unauthorized } from "./errors";
import { trpcCodeFor } from "./http/trpc-status";
import type { MessagingProvider } from "./messaging/provider";

/** Who is calling, as established by the transport (REST facade: API key; /api/trpc: session). */
export type Caller =
  | { kind: "apiKey"; tenantId: string; apiKeyId: string }
  | { kind: "session"; tenantId: string; userId: string }
  | { kind: "partner"; tenantId: string; appId: string; grantId: string; scopes: string[] }
  | { kind: "anonymous"; credentials: "missing" | "invalid" };

export interface Context {
  db: Db;
  provider: MessagingProvider;
  caller: Caller;
  now: Date;
  /** The client address (clientIp), for per-address limits of public procedures such as sign-up. */
  clientIp?: string;
  /** The response's headers, where the transport has them (/api/trpc): a password change sets its new session cookie. */
  resHeaders?: Headers;
  /**
   * Where the transport writes a file answer as a stream (the REST facade): a procedure with `fileResponse` hands its
   * body here and answers `{file}` with an empty content (server/launches/csv-export.ts). Absent (/api/trpc): a CSV is refused.
   */
  sendFile?: (file: FileStream) => void;
}

/** A file answer written as it is produced (Context.sendFile). */
export interface FileStream {
  content_type: string;
  file_name: string;
  body: ReadableStream<Uint8Array>;
}

export type AppMeta = {
  /** HTTP status of a successful REST answer (default 200). */
  successStatus?: 200 | 201;
  /** Accepts the Idempotency-Key header (docs/decisions.md#idempotency). */
  idempotent?: boolean;
  /**
   * The procedure may answer a file instead of JSON: an output `{file: {content_type, file_name, content}}`
   * is written as it is by the REST facade (server/http/rest.ts), and the OpenAPI document lists this
   * content type beside JSON (launch-members' CSV).
   */
  fileResponse?: string;
};

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta<AppMeta>>()
  .create({
    errorFormatter({ shape, error }) {
      const domain = error.cause instanceof DomainError ? error.cause : undefined;
      // Unexpected errors never leak their text (SQL, stack, another tenant's data).
      const message = error.code === "INTERNAL_SERVER_ERROR" && !domain ? "Internal server error" : shape.message;
      const { stack: _stack, ...data } = shape.data;
      return { ...shape, message, data: { ...data, domainCode: domain?.code, extras: domain?.extras } };
    },
  });

/** Domain errors thrown anywhere below become tRPC errors with the right code, the domain error kept as cause. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError && result.error.code === "INTERNAL_SERVER_ERROR") {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeFor(cause.status) ?? "INTERNAL_SERVER_ERROR", message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

export const publicProcedure = t.procedure.use(domainErrors);

/** The account owner: an API key (REST) or a dashboard session (tRPC). Gives ctx.tenantId. */
const owner = t.middleware(({ ctx, next }) => {
  const c = ctx.caller;
  if (c.kind === "apiKey" || c.kind === "session") return next({ ctx: { tenantId: c.tenantId } });
  if (c.kind === "partner") throw new Unauthorized("This endpoint needs the account owner's API key; a partner token is not accepted.");
  throw new Unauthorized();
});
export const ownerProcedure = publicProcedure.use(owner);

/** The owner, where the spec answers a partner token 403 instead of 401 (test-webhook). */
export const ownerPartnerForbiddenProcedure = publicProcedure
  .use(({ ctx, next }) => {
    if (ctx.caller.kind === "partner") throw new Forbidden("Partner apps cannot use this endpoint.", "partner_forbidden");
    return next();
  })
  .use(owner);

/** Dashboard-only operations (API keys, account). Gives ctx.userId and ctx.tenantId. */
export const sessionProcedure = publicProcedure.use(({ ctx, next }) => {
  const c = ctx.caller;
  if (c.kind !== "session") throw new Unauthorized("Sign in to the dashboard first.", "session_required");
  return next({ ctx: { tenantId: c.tenantId, userId: c.userId } });
});

export type PartnerScope = "statistics:read" | "campaigns:read" | "settings:read";

/** A partner app's bearer token carrying `scope`. Gives ctx.partner and ctx.tenantId. */
export const partnerProcedure = (scope: PartnerScope) =>
  publicProcedure.use(({ ctx, next }) => {
    const c = ctx.caller;
    if (c.kind !== "partner") throw new Unauthorized("A partner access token is required (Authorization: Bearer).", "invalid_token");
    if (!c.scopes.includes(scope)) throw new Forbidden(`The token lacks the scope ${scope}.`, "insufficient_scope");
    return next({ ctx: { tenantId: c.tenantId, partner: c } });
  });
