import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { Db } from "../db/client";
import type { MemberRole } from "../db/schema";
import { roleAtLeast } from "./members/roles";
import { DomainError, Forbidden, Unauthorized } from "./errors";
import { trpcCodeFor } from "./http/trpc-status";
import type { MessagingProvider } from "./messaging/provider";

/** Who is calling, as established by the transport (REST facade: API key; /api/trpc: session). */
export type Caller =
  | { kind: "apiKey"; tenantId: string; apiKeyId: string; apiKeyPrefix?: string }
  | { kind: "session"; tenantId: string; userId: string; role: MemberRole; email?: string }
  | { kind: "partner"; tenantId: string; appId: string; appName?: string; grantId: string; scopes: string[] }
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
   * body here and answers `{file}` with an empty content (server/launches/funnel/csv-export.ts). Absent (/api/trpc): a CSV is refused.
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
  /**
   * Who the procedure is for, set by the ladder below (server/procedure-ladder.test.ts checks every procedure has one):
   * `public`, `partner` (a scope), `account` (an API key or a member of `role`), `session` (a member of `role` only),
   * `self` (the signed-in person, whatever the role: their password, their accounts).
   */
  access?: "public" | "partner" | "account" | "session" | "self";
  /** The least role a dashboard member needs (docs/team.md#roles). */
  role?: MemberRole;
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

const base = t.procedure.use(domainErrors);
export const publicProcedure = base.meta({ access: "public" });

/**
 * Hook for the refused call's audit entry (server/audit/record-denied.ts registers it; the ladder does not import the
 * audit log, so the order of imports stays one way). Called before the 403 is thrown.
 */
let onDenied: ((ctx: Context, action: string) => Promise<void>) | undefined;
export const whenDenied = (hook: typeof onDenied) => {
  onDenied = hook;
};

/** A member below `least`: 403 `forbidden` naming the role needed (docs/team.md#roles), the attempt recorded. */
async function requireRole(ctx: Context, least: MemberRole, path: string) {
  const c = ctx.caller;
  if (c.kind !== "session" || roleAtLeast(c.role, least)) return;
  await onDenied?.(ctx, path).catch((err) => console.error("[audit] denied entry not written", err));
  throw new Forbidden(`This needs the role ${least} or above in this account (your role: ${c.role}).`, "forbidden");
}

/**
 * The account: an API key (REST; acts as the whole account) or a dashboard member of at least `role` (tRPC).
 * Gives ctx.tenantId.
 */
export const accountProcedure = (role: MemberRole) =>
  base.meta({ access: "account", role }).use(async ({ ctx, next, path }) => {
    const c = ctx.caller;
    if (c.kind === "partner") throw new Unauthorized("This endpoint needs the account owner's API key; a partner token is not accepted.");
    if (c.kind !== "apiKey" && c.kind !== "session") throw new Unauthorized();
    await requireRole(ctx, role, path);
    return next({ ctx: { tenantId: c.tenantId } });
  });

/** The account, where the spec answers a partner token 403 instead of 401 (test-webhook). */
export const accountPartnerForbiddenProcedure = (role: MemberRole) =>
  base
    .use(({ ctx, next }) => {
      if (ctx.caller.kind === "partner") throw new Forbidden("Partner apps cannot use this endpoint.", "partner_forbidden");
      return next();
    })
    .concat(accountProcedure(role));

const signedIn = t.middleware(({ ctx, next }) => {
  const c = ctx.caller;
  if (c.kind !== "session") throw new Unauthorized("Sign in to the dashboard first.", "session_required");
  return next({ ctx: { tenantId: c.tenantId, userId: c.userId, role: c.role } });
});

/** Dashboard-only operations of the account (API keys, members) for a member of at least `role`. Gives ctx.userId and ctx.tenantId. */
export const sessionProcedure = (role: MemberRole) =>
  base
    .meta({ access: "session", role })
    .use(signedIn)
    .use(async ({ ctx, next, path }) => {
      await requireRole(ctx, role, path);
      return next();
    });

/** The signed-in person's own things, whatever their role (their password, their accounts, an invitation to accept). */
export const selfProcedure = base.meta({ access: "self" }).use(signedIn);

export type PartnerScope = "statistics:read" | "campaigns:read" | "settings:read";

/** A partner app's bearer token carrying `scope`. Gives ctx.partner and ctx.tenantId. */
export const partnerProcedure = (scope: PartnerScope) =>
  base.meta({ access: "partner" }).use(({ ctx, next }) => {
    const c = ctx.caller;
    if (c.kind !== "partner") throw new Unauthorized("A partner access token is required (Authorization: Bearer).", "invalid_token");
    if (!c.scopes.includes(scope)) throw new Forbidden(`The token lacks the scope ${scope}.`, "insufficient_scope");
    return next({ ctx: { tenantId: c.tenantId, partner: c } });
  });
