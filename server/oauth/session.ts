import { getToken } from "next-auth/jwt";
import { authOptions } from "../auth/next-auth";
import type { SignedInUser } from "./authorize";

/** A cookie value percent-decoded; one that is not valid percent-encoding is kept as sent (as the `cookie` package does). */
const cookieValue = (raw: string) => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

export function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq).trim()] = cookieValue(part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * The dashboard session of a request, read from next-auth's session cookie. Works from the Request
 * alone (no next/headers), so the same route handlers run in Next.js and in the node:http test server.
 */
export async function sessionUser(req: Request): Promise<SignedInUser | undefined> {
  const token = await getToken({
    // Only the cookie: next-auth would also take a session JWT from `Authorization: Bearer`.
    req: { headers: {}, cookies: parseCookies(req.headers.get("cookie")) } as never,
    secret: authOptions.secret as string,
  }).catch(() => null);
  if (!token?.sub || typeof token.tenantId !== "string") return undefined;
  return { userId: token.sub, tenantId: token.tenantId };
}
