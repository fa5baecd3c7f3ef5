import type { TRPCError } from "@trpc/server";
import { STATUS_CODES } from "node:http";
import { DomainError, RateLimited, type EnvelopeExtras } from "../errors";
import { trpcStatus } from "./trpc-status";

export interface HttpResult {
  status: number;
  /** A stream only for a file answer written as it comes (Context.sendFile: the launches' CSV exports). */
  body: string | ReadableStream<Uint8Array>;
  headers: Record<string, string>;
}

export const jsonHeaders = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

/**
 * Every API answer's headers (docs/decisions.md#limits-abuse-retention, "Security headers"): added by `toResponse` and by
 * node-bridge's sendWebResponse (answers the front server writes itself); pages get theirs from
 * next.config.mjs.
 */
export const apiSecurityHeaders: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
};

export const reasonPhrase = (status: number) => STATUS_CODES[status] ?? "Error";

const defaultCodes: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable_entity",
  429: "rate_limited",
  500: "internal_error",
  501: "not_implemented",
  503: "service_unavailable",
};

/** The spec's error envelope: {success:false, error:<reason phrase>, message, code?, current?, max?, …}. */
export function errorResult(status: number, message: string, code?: string, extras: EnvelopeExtras = {}, headers: Record<string, string> = {}): HttpResult {
  const body = { success: false, error: reasonPhrase(status), message, code: code ?? defaultCodes[status], ...extras };
  return { status, body: JSON.stringify(body), headers: { ...jsonHeaders, ...headers } };
}

export function domainErrorResult(err: DomainError): HttpResult {
  const headers: Record<string, string> = err instanceof RateLimited ? { "retry-after": String(err.retryAfterSeconds) } : {};
  return errorResult(err.status, err.message, err.code, err.extras, headers);
}

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
}

/** Issues spelled out in one message; a body with thousands of bad items gets a count for the rest. */
const issuesShown = 20;

/** "name: is required; groups.2: must be a group id …": every message names its field. */
export function describeIssues(issues: ZodLikeIssue[]): string {
  const shown = issues
    .slice(0, issuesShown)
    .map((i) => {
      const field = i.path.map(String).join(".") || "body";
      return `${field}: ${i.message}`;
    })
    .join("; ");
  return issues.length > issuesShown ? `${shown}; and ${issues.length - issuesShown} more problems` : shown;
}

/** Maps whatever a tRPC procedure threw to the envelope. */
export function trpcErrorResult(error: TRPCError): HttpResult {
  const cause = error.cause as unknown;
  if (cause instanceof DomainError) return domainErrorResult(cause);
  if (error.code === "BAD_REQUEST" && cause instanceof Error && cause.name === "ZodError") {
    return errorResult(400, describeIssues((cause as unknown as { issues: ZodLikeIssue[] }).issues), "validation_error");
  }
  switch (error.code) {
    case "PARSE_ERROR":
      return errorResult(400, "The request body is not valid JSON.", "malformed_json");
    case "NOT_FOUND":
      return errorResult(404, error.message || "Not found");
    case "PAYLOAD_TOO_LARGE":
      return errorResult(413, "The request body is too large.");
    case "UNSUPPORTED_MEDIA_TYPE":
      return errorResult(400, "The request body must be JSON (Content-Type: application/json).", "unsupported_media_type");
    case "INTERNAL_SERVER_ERROR":
      return errorResult(500, "Internal server error");
    default: {
      const status = (trpcStatus as Partial<Record<TRPCError["code"], number>>)[error.code] ?? 500;
      return errorResult(status, status === 500 ? "Internal server error" : error.message);
    }
  }
}

/** A file answer's headers (a download named `file_name`): the REST facade's and the dashboard's downloads alike. */
export function fileHeaders(file: { content_type: string; file_name?: unknown }): Record<string, string> {
  const name = typeof file.file_name === "string" ? file.file_name.replace(/[^\w.-]/g, "_") : "download";
  return { "content-type": file.content_type, "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" };
}

/** What the compression middleware would skip on its own if it knew the length (it does not: it streams). */
const compressionThreshold = 1024;

/**
 * Next.js gzips every JSON response whose length it does not know, and it never knows a route
 * handler's. For an answer of a few hundred bytes that costs more (here and in the client, which must
 * inflate it) than it saves: small answers say `no-transform`, which the middleware honours.
 */
export function toResponse(r: HttpResult): Response {
  const small = typeof r.body === "string" && Buffer.byteLength(r.body) < compressionThreshold;
  const cacheControl = r.headers["cache-control"];
  const headers =
    small && cacheControl && !cacheControl.includes("no-transform") ? { ...r.headers, "cache-control": `${cacheControl}, no-transform` } : r.headers;
  return new Response(r.body, { status: r.status, headers: { ...apiSecurityHeaders, ...headers } });
}
