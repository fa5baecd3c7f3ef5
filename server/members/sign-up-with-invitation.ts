import type { Db } from "../../db/client";
import { invitations, users } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import { and, eq, gt, isNull } from "drizzle-orm";
import { hashPassword } from "../auth/password";
import { Conflict, NotFound } from "../errors";
import { newId } from "../ids";
import { sha256Hex } from "../keys/api-key-format";
import { acceptInvitation } from "./invitations";

/**
 * Signing up through an invitation (docs/team.md#invitations): a user with the invited e-mail joins the account
 * with the invited role, in one transaction with spending the link. The browser then signs in as usual.
 */
export async function signUpWithInvitation(db: Db, input: { token: string; name: string; password: string }, ip: string | null, now: Date) {
  const [inv] = await db
    .select({ email: invitations.email, tenantId: invitations.tenantId })
    .from(invitations)
    .where(and(eq(invitations.tokenHash, sha256Hex(input.token)), isNull(invitations.usedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now)));
  if (!inv) throw new NotFound("This invitation link is not valid: it was used, revoked or has expired.");
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction(async (tx) => {
      const userId = newId("user");
      // users.tenant_id: the account first joined; what the person may open is their memberships.
      await tx.insert(users).values({ id: userId, tenantId: inv.tenantId, email: inv.email, name: input.name, passwordHash });
      const tenantId = await acceptInvitation(tx, input.token, { id: userId, email: inv.email }, ip, now);
      return { tenantId, email: inv.email };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(`An account with the email ${inv.email} already exists: sign in to accept the invitation.`, "email_taken");
    throw err;
  }
}
