import type { AnyTRPCRouter, TRPCError } from "@trpc/server";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import type { Db } from "../../db/client";
import type { Caller, Context, FileStream } from "../trpc";
import { bodyCap, PayloadTooLarge, readCappedText } from "./body-limit";
import { clientIp } from "./client-address";
import { errorResult, fileHeaders, jsonHeaders, toResponse, trpcErrorResult, type HttpResult } from "./envelope";
import { validateIdempotencyKey, withIdempotency } from "./idempotency";
import { consume, type LimitOutcome } from "./rate-limit";
import { pinBodyCoercion } from "./no-body-coercion";
import { matchRoute, pathParamOverridden, restPrefix, restRoutesOf, type RestRoute } from "./routes";
import { processWide } from "../process-state";

/**
 * What the facade needs from the rest of the server, handed in by whoever mounts it (server/rest-api.ts
 * builds the real one): server/http knows no domain, so who a caller is and where the database and the
 * provider come from are not its business.
 */
export interface RestDeps {
  /** The app router (server/root.ts): the procedures the facade serves. */
  router: AnyTRPCRouter;
  /** The database and the messaging provider (server/services.ts). */
  services(): Promise<Pick<Context, "db" | "provider">>;
  /** Who calls (API key, partner token or nobody) and whether their address is blocked by failed authentications. */
  resolveCaller(db: Db, headers: Headers, now: Date, ip: string): Promise<{ caller: Caller; blocked: LimitOutcome }>;
}

/** Per-request state handed to trpc-to-openapi's handler through the request object. */
interface Exchange {
  ctx: Context;
  route: RestRoute;
  error?: TRPCError;
  /** A file the procedure handed over to be written as it comes (Context.sendFile). */
  streamed?: FileStream;
}

/** Built once, with the route table: the stock fetch adapter rebuilds it (and the whole OpenAPI document) on every request. */
function openApiHandler(router: AnyTRPCRouter) {
  return processWide("openApiHandler", () => {
    pinBodyCoercion(router);
    const handler = createOpenApiNodeHttpHandler({
      router,
      createContext: ({ req }: { req: { exchange: Exchange } }) => req.exchange.ctx,
      onError: ({ error, req }: { error: TRPCError; req: { exchange: Exchange } }) => {
        req.exchange.error = error;
      },
    } as never) as (req: unknown, res: unknown) => unknown;
    return { handler, routes: restRoutesOf(router) };
  });
}

/** Calls the tRPC procedure behind `route` through trpc-to-openapi, with the body already parsed. */
async function runProcedure(handler: (req: unknown, res: unknown) => unknown, req: Request, url: URL, body: unknown, exchange: Exchange): Promise<HttpResult> {
  const innerUrl = `${url.origin}${url.pathname.slice(restPrefix.length)}${url.search}`;
  let headers: Headers | undefined;
  const proxied = new Proxy(req, {
    get: (target, prop) => {
      if (prop === "url") return innerUrl;
      if (prop === "body") return body;
      if (prop === "exchange") return exchange;
      if (prop === "headers") {
        // The body was parsed here; the adapter only needs to know it is JSON.
        if (!headers) {
          headers = new Headers(target.headers);
          if (!headers.get("content-type")?.startsWith("application/json")) headers.set("content-type", "application/json");
        }
        return headers;
      }
      const value = (target as unknown as Record<PropertyKey, unknown>)[prop];
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    let statusCode = 200;
    const res = {
      setHeader: () => {},
      get statusCode() {
        return statusCode;
      },
      set statusCode(code: number) {
        statusCode = code;
      },
      end: (chunk?: string) => resolve({ status: statusCode, text: chunk ?? "" }),
    };
    Promise.resolve(handler(proxied, res)).catch(reject);
  });
  if (status < 400 && !exchange.error) {
    const streamed = exchange.route.meta.fileResponse ? exchange.streamed : undefined;
    if (streamed) return { status: exchange.route.meta.successStatus ?? 200, body: streamed.body, headers: fileHeaders(streamed) };
    const file = exchange.route.meta.fileResponse ? fileOf(text) : undefined;
    if (file) return { status: exchange.route.meta.successStatus ?? 200, body: file.content, headers: file.headers };
    return { status: exchange.route.meta.successStatus ?? 200, body: text, headers: { ...jsonHeaders } };
  }
  // An error after the procedure handed a stream over (its output did not validate): the stream is not read.
  void exchange.streamed?.body.cancel().catch(() => {});
  if (exchange.error) {
    const result = trpcErrorResult(exchange.error);
    if (result.status === 500) console.error("[rest] unexpected error", exchange.route.procedurePath, exchange.error.cause ?? exchange.error);
    return result;
  }
  return errorResult(status, "Request failed");
}

/** A procedure's `{file: {content_type, file_name, content}}` answer (AppMeta `fileResponse`), as a download. */
function fileOf(text: string): { content: string; headers: Record<string, string> } | undefined {
  const file = (JSON.parse(text) as { file?: { content_type?: unknown; file_name?: unknown; content?: unknown } }).file;
  if (!file || typeof file.content !== "string" || typeof file.content_type !== "string") return undefined;
  return { content: file.content, headers: fileHeaders({ content_type: file.content_type, file_name: file.file_name }) };
}

async function readBody(req: Request, pathname: string): Promise<{ body?: unknown; error?: HttpResult }> {
  if (req.method === "GET" || req.method === "HEAD") return {};
  let text: string;
  try {
    text = await readCappedText(req, bodyCap(pathname));
  } catch (err) {
    if (err instanceof PayloadTooLarge) return { error: errorResult(413, err.message, "payload_too_large", { max: err.cap }, { connection: "close" }) };
    throw err;
  }
  if (text.trim() === "") return { body: {} };
  const type = req.headers.get("content-type");
  if (type && !type.includes("json")) {
    return { error: errorResult(400, "The request body must be JSON (Content-Type: application/json).", "unsupported_media_type") };
  }
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { error: errorResult(400, "The request body is not valid JSON.", "malformed_json") };
  }
}

/** The REST facade: /api/external/* → auth, rate limit, idempotency → tRPC procedure → spec envelope. */
export async function handleExternalRequest(req: Request, deps: RestDeps): Promise<Response> {
  let limitHeaders: Record<string, string> = {};
  try {
    const now = new Date();
    const url = new URL(req.url);
    const { db, provider } = await deps.services();
    const { handler, routes } = openApiHandler(deps.router);
    const { route, allowed } = matchRoute(routes, req.method, url.pathname);
    if (!route) {
      if (allowed.length > 0) {
        return toResponse(
          errorResult(405, `${req.method} is not allowed on ${url.pathname}; use ${allowed.join(", ")}.`, undefined, {}, { allow: allowed.join(", ") }),
        );
      }
      return toResponse(errorResult(404, `No endpoint ${req.method} ${url.pathname}.`));
    }

    const ip = clientIp(req.headers);
    const { caller, blocked } = await deps.resolveCaller(db, req.headers, now, ip);
    if (!blocked.allowed) {
      return toResponse(errorResult(429, "Too many failed authentication attempts from this address; retry later.", "rate_limited", {}, blocked.headers));
    }
    if (caller.kind === "anonymous") {
      await consume(db, "failedAuth", ip);
    } else {
      const limit =
        caller.kind === "partner"
          ? await consume(db, "partner", caller.grantId)
          : await consume(db, "apiKey", caller.kind === "apiKey" ? caller.apiKeyId : caller.tenantId);
      limitHeaders = limit.headers;
      if (!limit.allowed) return toResponse(errorResult(429, "Rate limit exceeded; retry after the time in Retry-After.", "rate_limited", {}, limit.headers));
    }

    // Every REST procedure needs a caller: without valid credentials the ladder answers 401 (before any
    // input is parsed), so the body is never read (docs/decisions.md#limits-abuse-retention, "Request bodies").
    const { body, error } = caller.kind === "anonymous" ? { body: {}, error: undefined } : await readBody(req, url.pathname);
    if (error) return toResponse(withHeaders(error, limitHeaders));
    const overridden = pathParamOverridden(route, url.pathname, body);
    if (overridden)
      return toResponse(withHeaders(errorResult(400, `${overridden}: is set by the path and cannot be changed.`, "validation_error"), limitHeaders));

    const exchange: Exchange = { ctx: { db, provider, caller, now, clientIp: ip }, route };
    exchange.ctx.sendFile = (file) => {
      exchange.streamed = file;
    };
    const run = () => runProcedure(handler, req, url, body, exchange);
    const key = req.headers.get("idempotency-key");
    let result: HttpResult;
    if (key !== null && route.meta.idempotent && caller.kind === "apiKey") {
      const invalid = validateIdempotencyKey(key);
      result = invalid ?? (await withIdempotency(db, { tenantId: caller.tenantId, key, method: req.method, path: url.pathname, body, now }, run));
    } else {
      result = await run();
    }
    return toResponse(withHeaders(bearerChallenge(result, caller), limitHeaders));
  } catch (err) {
    console.error("[rest] request failed", err);
    return toResponse(withHeaders(errorResult(500, "Internal server error"), limitHeaders));
  }
}

const withHeaders = (r: HttpResult, extra: Record<string, string>): HttpResult => ({ ...r, headers: { ...r.headers, ...extra } });

/** RFC 6750 §3: a refused bearer token (or a partner endpoint called without one) gets a Bearer challenge. */
function bearerChallenge(r: HttpResult, caller: Caller): HttpResult {
  if (r.status !== 401 && r.status !== 403) return r;
  if (typeof r.body !== "string") return r;
  const code = (JSON.parse(r.body) as { code?: string }).code;
  const realm = 'Bearer realm="partner"';
  if (code === "insufficient_scope") return withHeaders(r, { "www-authenticate": `${realm}, error="insufficient_scope"` });
  if (code === "invalid_token" || (r.status === 401 && caller.kind === "partner")) {
    const missing = caller.kind === "anonymous" && caller.credentials === "missing";
    return withHeaders(r, { "www-authenticate": missing ? realm : `${realm}, error="invalid_token"` });
  }
  return r;
}
