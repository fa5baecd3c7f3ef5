import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { partnerApps } from "../../db/schema";
import { OAuthError } from "./errors";
import { matchesHash } from "./secrets";
import { isIllFormed } from "../text";

/** RFC 6749 §2.3.1: Basic credentials are form-encoded; not valid percent-encoding is a failed authentication. */
const formDecode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    throw new OAuthError("invalid_client", "Malformed Basic credentials.", 401);
  }
};

/**
 * Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3):
 * confidential apps by client_secret_basic or client_secret_post (one method per request), public
 * apps by client_id alone. Any failure is 401 invalid_client.
 */
export async function authenticateClient(db: Db, headers: Headers, form: URLSearchParams) {
  let clientId = form.get("client_id") ?? undefined;
  let secret = form.get("client_secret") ?? undefined;
  const authorization = headers.get("authorization");
  const basic = authorization?.match(/^Basic\s+(.+)$/i);
  if (basic) {
    if (secret !== undefined) throw new OAuthError("invalid_request", "Use one client authentication method, not both Basic and client_secret.");
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "Malformed Basic credentials.", 401);
    const basicId = formDecode(decoded.slice(0, colon));
    if (clientId !== undefined && clientId !== basicId) throw new OAuthError("invalid_request", "client_id differs from the Basic credentials.");
    clientId = basicId;
    secret = formDecode(decoded.slice(colon + 1));
  }
  if (!clientId) throw new OAuthError("invalid_client", "Client authentication is required (client_id).", 401);
  // A NUL is no client id (and PostgreSQL text cannot hold one): unknown, without asking the database.
  const [app] = isIllFormed(clientId) ? [] : await db.select().from(partnerApps).where(eq(partnerApps.id, clientId));
  if (!app) throw new OAuthError("invalid_client", "Unknown client.", 401);
  if (app.clientType === "confidential") {
    if (secret === undefined || !matchesHash(secret, app.clientSecretHash)) throw new OAuthError("invalid_client", "Client authentication failed.", 401);
  } else if (secret !== undefined && secret !== "") {
    throw new OAuthError("invalid_client", "A public client has no secret; authenticate with PKCE only.", 401);
  }
  return { app, usedBasic: Boolean(basic) };
}
