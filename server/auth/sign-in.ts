import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { memberships, users } from "../../db/schema";
import { consume, reset, reward } from "../http/rate-limit";
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from "./password";
import { endSessions } from "./session";

/** `sessionVersion`: the version the new session is issued at (server/auth/session.ts). */
export type SignedInUser = { id: string; email: string; name: string; tenantId: string; sessionVersion: number };

/** Too many failed sign-ins for the account or the address: refused without hashing. */
export class SignInThrottled extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many failed sign-ins; retry in ${retryAfterSeconds} s`);
    this.name = "SignInThrottled";
  }
}

/**
 * Dashboard sign-in (docs/decisions.md#limits-abuse-retention): at most RATE_LIMIT_SIGN_IN_PER_ACCOUNT (10) failures per email and
 * RATE_LIMIT_SIGN_IN_PER_ADDRESS (50) per client address in 15 minutes. Each attempt takes its point
 * before the password is hashed (so parallel guesses cannot slip past the count), and an attempt
 * beyond either limit is refused at once — the right password too — and counts as a failed
 * authentication of the address. A success gives the address its point back and clears the account's
 * failures. An unknown email is hashed against a dummy, so it costs what a wrong password costs; a hash
 * made with older parameters is replaced after a successful sign-in.
 *
 * A throttled lock ends the account's dashboard sessions (docs/security.md, "Sessions"): the failure that
 * spends the account's last point raises its session version (exactly one attempt sees the last point go:
 * the count is atomic), so a session an attacker may already hold does not outlive the lock. Attempts
 * refused afterwards write nothing.
 */
export async function signIn(db: Db, input: { email?: string; password?: string; ip: string }): Promise<SignedInUser | null> {
  const email = input.email?.trim().toLowerCase();
  const password = input.password;
  if (!email || !password) return null;

  // The address first: an address already over its limit does not get to create account buckets.
  const byAddress = await consume(db, "signInAddress", input.ip);
  // No account has such an email or password (sign-up bounds both): a failure, without a bucket per junk string.
  if (byAddress.allowed && (email.length > 254 || password.length > 1024)) return null;
  const byAccount = byAddress.allowed ? await consume(db, "signInAccount", email) : undefined;
  if (!byAddress.allowed || !byAccount?.allowed) {
    await consume(db, "failedAuth", input.ip);
    throw new SignInThrottled(Math.max(byAddress.retryAfterSeconds, byAccount?.retryAfterSeconds ?? 0));
  }

  const [user] = await db.select().from(users).where(eq(users.email, email));
  const ok = user ? await verifyPassword(password, user.passwordHash) : await verifyAgainstDummy(password);
  if (!user || !ok) {
    if (user && byAccount.remaining === 0) await endSessions(db, { userId: user.id });
    return null;
  }

  await Promise.all([reward(db, "signInAddress", input.ip), reset(db, "signInAccount", email)]);
  if (needsRehash(user.passwordHash)) {
    const passwordHash = await hashPassword(password);
    await db.update(users).set({ passwordHash }).where(eq(users.id, user.id));
  }
  // The session opens on the account first joined that the person still belongs to (docs/team.md#several-accounts).
  const [first] = await db
    .select({ tenantId: memberships.tenantId })
    .from(memberships)
    .where(eq(memberships.userId, user.id))
    .orderBy(asc(memberships.createdAt), asc(memberships.tenantId))
    .limit(1);
  if (!first) return null;
  return { id: user.id, email: user.email, name: user.name, tenantId: first.tenantId, sessionVersion: user.sessionVersion };
}
