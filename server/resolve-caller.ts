import type { Db } from "../db/client";
import { lookupApiKey, verifyApiKey } from "./keys/verify-api-key";
import { resolveAccessToken } from "./oauth/tokens";
import type { Caller } from "./trpc";
import { bucketKey, bucketsInDatabase, outcomeOfBucket, peek, type LimitOutcome } from "./http/rate-limit";

/** `x-api-key` is canonical; `api-key` is accepted as an alias. */
export function presentedApiKey(headers: Headers): string | undefined {
  return headers.get("x-api-key")?.trim() || headers.get("api-key")?.trim() || undefined;
}

/** Establishes who calls the REST facade. Authorization (what they may do) is the procedure ladder's job. */
export async function resolveRestCaller(db: Db, headers: Headers, now: Date): Promise<Caller> {
  const key = presentedApiKey(headers);
  if (key) {
    const found = await verifyApiKey(db, key, now);
    return found ? { kind: "apiKey", ...found } : { kind: "anonymous", credentials: "invalid" };
  }
  const authorization = headers.get("authorization");
  if (authorization) {
    // A partner app's access token (RFC 6750 §2.1); expired, revoked or unknown is invalid_token.
    const bearer = authorization.match(/^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i)?.[1];
    const partner = bearer ? await resolveAccessToken(db, bearer, now) : undefined;
    return partner ? { kind: "partner", ...partner } : { kind: "anonymous", credentials: "invalid" };
  }
  return { kind: "anonymous", credentials: "missing" };
}

/**
 * The REST facade's caller and whether the client address is blocked by failed authentications
 * (checked before the credentials are). With an API key both come from one query.
 */
export async function resolveRestCallerAt(db: Db, headers: Headers, now: Date, ip: string): Promise<{ caller: Caller; blocked: LimitOutcome }> {
  const key = presentedApiKey(headers);
  if (!key) {
    const blocked = await peek(db, "failedAuth", ip);
    return { caller: blocked.allowed ? await resolveRestCaller(db, headers, now) : { kind: "anonymous", credentials: "invalid" }, blocked };
  }
  const inDatabase = bucketsInDatabase(db);
  const found = await lookupApiKey(db, key, now, inDatabase ? bucketKey(db, "failedAuth", ip) : undefined);
  // A key that just authenticated (the key cache) is not guessing: its address's failures don't block it.
  const blocked = inDatabase || found.cached ? outcomeOfBucket(db, "failedAuth", found.bucket, now) : await peek(db, "failedAuth", ip);
  return { caller: found.key ? { kind: "apiKey", ...found.key } : { kind: "anonymous", credentials: "invalid" }, blocked };
}
