import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { users } from "../../db/schema";
import { BadRequest, RateLimited, Unauthorized } from "../errors";
import { hashPassword } from "./password";
import { signIn, SignInThrottled } from "./sign-in";

/**
 * The signed-in user's password change (docs/security.md, "Sessions"). The current password is checked
 * exactly as a sign-in checks it (signIn: same per-account and per-address budgets, so this is no way
 * around the sign-in throttle, and a lock here ends the sessions as one there does). The new hash and a
 * raised session version are written in one statement: every other session of the user ends with it.
 * Returns the user as stored, for the caller to issue this session a new cookie.
 */
export async function changePassword(db: Db, input: { userId: string; currentPassword: string; newPassword: string; ip: string }) {
  const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, input.userId));
  if (!user) throw new Unauthorized("Sign in to the dashboard first.", "session_required");
  let verified: Awaited<ReturnType<typeof signIn>>;
  try {
    verified = await signIn(db, { email: user.email, password: input.currentPassword, ip: input.ip });
  } catch (err) {
    if (err instanceof SignInThrottled) {
      throw new RateLimited(`Too many wrong passwords; retry in ${err.retryAfterSeconds} s.`, err.retryAfterSeconds, "password_change_limited");
    }
    throw err;
  }
  if (!verified) throw new BadRequest("currentPassword: is not your current password.", "wrong_password");
  const passwordHash = await hashPassword(input.newPassword);
  const [saved] = await db
    .update(users)
    .set({ passwordHash, sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(eq(users.id, input.userId))
    .returning();
  return saved;
}
