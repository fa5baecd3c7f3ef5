import { eq, sql } from "drizzle-orm";
import { encode, getToken } from "next-auth/jwt";
import type { Db, Tx } from "../../db/client";
import { users } from "../../db/schema";
import { env, persistentSecret } from "../env";
import { parseCookies } from "../http/cookies";

/**
 * Dashboard sessions (docs/security.md, "Sessions"): next-auth's JWT cookie, which also carries the
 * user's session version (`sv`) as it was when the cookie was issued. Each request compares it with
 * `users.session_version`; sign-out, a password change and a throttled lock raise that column, so every
 * session of the user ends at once instead of when its cookie expires.
 */
export const sessionMaxAgeSeconds = 7 * 24 * 60 * 60;

/** Read on first use, not at import: `next build` imports this module and must not write secrets. */
export const sessionSecret = () => persistentSecret("NEXTAUTH_SECRET", "nextauth-secret");

/** next-auth's rule (an https URL gets `__Secure-` cookies), decided here once so every reader and writer agrees. */
export const secureCookies = () => env.nextAuthUrl.startsWith("https://");
export const sessionCookieName = () => `${secureCookies() ? "__Secure-" : ""}next-auth.session-token`;

export interface SessionUser {
  userId: string;
  tenantId: string;
}

/** A cookie issued before session versions existed carries none: it counts as version 0, every user's first. */
const versionOf = (claim: unknown) => (typeof claim === "number" ? claim : 0);

/** Whether a session issued at `version` is still in force for the user. */
export async function sessionIsCurrent(db: Db, userId: string, version: unknown): Promise<boolean> {
  const [row] = await db.select({ version: users.sessionVersion }).from(users).where(eq(users.id, userId));
  return row !== undefined && row.version === versionOf(version);
}

/** Ends every dashboard session of the user (sign-out, a throttled lock). */
export async function endSessions(db: Db | Tx, where: { userId: string } | { email: string }): Promise<void> {
  await db
    .update(users)
    .set({ sessionVersion: sql`${users.sessionVersion} + 1` })
    .where("userId" in where ? eq(users.id, where.userId) : eq(users.email, where.email));
}

/** The signed-in user of a request, from its session cookie alone (no next/headers), or undefined when absent, invalid or ended. */
export async function requestSession(db: Db, req: Request): Promise<SessionUser | undefined> {
  const token = await getToken({
    // Only the cookie: next-auth would also take a session JWT from `Authorization: Bearer`.
    req: { headers: {}, cookies: parseCookies(req.headers.get("cookie")) } as never,
    secret: sessionSecret(),
    cookieName: sessionCookieName(),
  }).catch(() => null);
  if (!token?.sub || typeof token.tenantId !== "string") return undefined;
  if (!(await sessionIsCurrent(db, token.sub, token.sv))) return undefined;
  return { userId: token.sub, tenantId: token.tenantId };
}

/**
 * A `Set-Cookie` value holding a new session for the user at `sessionVersion`, as next-auth would write it
 * (same name, claims, lifetime and attributes): the session that changed the password stays signed in.
 */
export async function sessionCookie(user: { id: string; tenantId: string; email: string; name: string; sessionVersion: number }, now: Date): Promise<string> {
  const value = await encode({
    token: { sub: user.id, name: user.name, email: user.email, tenantId: user.tenantId, sv: user.sessionVersion },
    secret: sessionSecret(),
    maxAge: sessionMaxAgeSeconds,
  });
  const expires = new Date(now.getTime() + sessionMaxAgeSeconds * 1000).toUTCString();
  return `${sessionCookieName()}=${value}; Path=/; Expires=${expires}; HttpOnly; SameSite=Lax${secureCookies() ? "; Secure" : ""}`;
}
