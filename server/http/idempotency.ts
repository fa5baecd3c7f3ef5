import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { idempotencyKeys } from "../../db/schema";
import { errorResult, jsonHeaders, type HttpResult } from "./envelope";

export const idempotencyRetentionMs = 24 * 60 * 60 * 1000;
/** A claim not finished within this time is taken to be abandoned by a crashed request. */
const claimLeaseMs = 60_000;

/** Key order and white space do not make a body different. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function fingerprint(method: string, path: string, body: unknown) {
  return createHash("sha256")
    .update(`${method} ${path}\n${canonical(body)}`)
    .digest("hex");
}

const inProgress = () =>
  errorResult(409, "A request with this Idempotency-Key is still being processed; retry later.", "idempotency_in_progress", {}, { "retry-after": "1" });

export function validateIdempotencyKey(key: string): HttpResult | undefined {
  if (key.length === 0 || key.length > 255) {
    return errorResult(400, "Idempotency-Key: must be 1 to 255 characters long.", "validation_error");
  }
  if (!/^[\x21-\x7e]+$/.test(key)) return errorResult(400, "Idempotency-Key: must be printable ASCII without spaces.", "validation_error");
}

/**
 * Runs `handler` at most once per (tenant, key): Stripe's semantics as docs/decisions.md#idempotency states them.
 * 2xx and 4xx answers are stored and replayed byte for byte; a 5xx is forgotten so a retry runs again.
 */
export async function withIdempotency(
  db: Db,
  req: { tenantId: string; key: string; method: string; path: string; body: unknown; now: Date },
  handler: () => Promise<HttpResult>,
): Promise<HttpResult> {
  const fp = fingerprint(req.method, req.path, req.body);
  const where = and(eq(idempotencyKeys.tenantId, req.tenantId), eq(idempotencyKeys.key, req.key));
  const lease = () => new Date(req.now.getTime() + claimLeaseMs);

  let claimed = false;
  for (let attempt = 0; attempt < 2 && !claimed; attempt++) {
    const inserted = await db
      .insert(idempotencyKeys)
      .values({ tenantId: req.tenantId, key: req.key, fingerprint: fp, state: "in_progress", lockedUntil: lease(), createdAt: req.now })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length > 0) {
      claimed = true;
      break;
    }
    const [existing] = await db.select().from(idempotencyKeys).where(where);
    if (!existing) continue; // deleted between the two statements: try the insert again
    if (existing.createdAt.getTime() < req.now.getTime() - idempotencyRetentionMs) {
      await db.delete(idempotencyKeys).where(and(where, eq(idempotencyKeys.createdAt, existing.createdAt)));
      continue; // expired: the key is free again
    }
    if (existing.fingerprint !== fp) {
      return errorResult(
        422,
        "Idempotency-Key was already used with a different request (method, path or body). Use a new key for a new request.",
        "idempotency_key_reused",
      );
    }
    if (existing.state === "done") {
      return {
        status: existing.responseStatus!,
        body: existing.responseBody!,
        headers: { ...jsonHeaders, "idempotent-replayed": "true" },
      };
    }
    if (existing.lockedUntil > req.now) {
      return inProgress();
    }
    // Abandoned by a crashed request: take the claim over (compare-and-set on the lease).
    const taken = await db
      .update(idempotencyKeys)
      .set({ lockedUntil: lease() })
      .where(and(where, eq(idempotencyKeys.state, "in_progress"), eq(idempotencyKeys.lockedUntil, existing.lockedUntil)))
      .returning({ key: idempotencyKeys.key });
    claimed = taken.length > 0;
    if (!claimed) return inProgress();
  }
  if (!claimed) return inProgress();

  let result: HttpResult;
  try {
    result = await handler();
  } catch (err) {
    await db.delete(idempotencyKeys).where(and(where, eq(idempotencyKeys.state, "in_progress")));
    throw err;
  }
  // A streamed file is never replayed (only GET exports stream; no idempotent route answers one): nothing is kept.
  if (result.status >= 500 || typeof result.body !== "string") {
    await db.delete(idempotencyKeys).where(and(where, eq(idempotencyKeys.state, "in_progress")));
  } else {
    await db.update(idempotencyKeys).set({ state: "done", responseStatus: result.status, responseBody: result.body }).where(where);
  }
  return result;
}
