import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { type MemberRole, memberships, users } from "../../db/schema";
import { env, persistentSecret } from "../env";
import { parseCookies } from "../http/cookies";

// next-auth's JWT code is loaded when a session is first read or written: callers with an API key never need it, and it
// costs each test file about 60 ms of its imports (docs/testing.md, "Where CI time goes").
const jwt = () => import("next-auth/jwt");

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
  /** The person's role in that tenant, read on every request (docs/team.md). */
  role: MemberRole;
  email: string;
}

/** A cookie issued before session versions existed carries none: it counts as version 0, every user's first. */
const versionOf = (claim: unknown) => (typeof claim === "number" ? claim : 0);

/**
 * The session's member when a session issued at `version` for `tenantId` is still in force: the user's version
 * unchanged and the user still a member of that tenant (docs/team.md: membership is checked on every request).
 */
export async function currentMember(db: Db, userId: string, version: unknown, tenantId: unknown): Promise<{ role: MemberRole; email: string } | undefined> {
  if (typeof tenantId !== "string") return undefined;
  const [row] = await db
    .select({ version: users.sessionVersion, email: users.email, role: memberships.role })
    .from(users)
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.tenantId, tenantId)))
    .where(eq(users.id, userId));
  return row !== undefined && row.version === versionOf(version) ? { role: row.role, email: row.email } : undefined;
}

/** Ends every dashboard session of the user (sign-out, a throttled lock, a role change or removal from an account). */
export async function endSessions(db: Db | Tx, where: { userId: string } | { email: string }): Promise<void> {
  await db
    .update(users)
    .set({ sessionVersion: sql`${users.sessionVersion} + 1` })
    .where("userId" in where ? eq(users.id, where.userId) : eq(users.email, where.email));
}

/** The signed-in user of a request, from its session cookie alone (no next/headers), or undefined when absent, invalid or ended. */
export async function requestSession(db: Db, req: Request): Promise<SessionUser | undefined> {
  const { getToken } = await jwt();
  const token = await getToken({
    // Only the cookie: next-auth would also take a session JWT from `Authorization: Bearer`.
    req: { headers: {}, cookies: parseCookies(req.headers.get("cookie")) } as never,
    secret: sessionSecret(),
    cookieName: sessionCookieName(),
  }).catch(() => null);
  if (!token?.sub || typeof token.tenantId !== "string") return undefined;
  const member = await currentMember(db, token.sub, token.sv, token.tenantId);
  return member && { userId: token.sub, tenantId: token.tenantId, ...member };
}

/**
 * A `Set-Cookie` value holding a new session for the user at `sessionVersion`, as next-auth would write it
 * (same name, claims, lifetime and attributes): the session that changed the password stays signed in.
 */
export async function sessionCookie(user: { id: string; tenantId: string; email: string; name: string; sessionVersion: number }, now: Date): Promise<string> {
  const { encode } = await jwt();
  const value = await encode({
    token: { sub: user.id, name: user.name, email: user.email, tenantId: user.tenantId, sv: user.sessionVersion },
    secret: sessionSecret(),
    maxAge: sessionMaxAgeSeconds,
  });
  const expires = new Date(now.getTime() + sessionMaxAgeSeconds * 1000).toUTCString();
  return `${sessionCookieName()}=${value}; Path=/; Expires=${expires}; HttpOnly; SameSite=Lax${secureCookies() ? "; Secure" : ""}`;
}
