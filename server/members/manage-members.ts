import { and, asc, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { type MemberRole, memberships, tenants, users } from "../../db/schema";
import { recordAudit } from "../audit/record-audit";
import { endSessions } from "../auth/session";
import { Conflict, Forbidden, NotFound } from "../errors";
import { roleAtLeast } from "./roles";
import { type ActingMember, assertMayGrant } from "./invitations";

/** The account's members, oldest first. */
export async function listMembers(db: Db, tenantId: string) {
  return db
    .select({ userId: users.id, email: users.email, name: users.name, role: memberships.role, joinedAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.tenantId, tenantId))
    .orderBy(asc(memberships.createdAt), asc(users.email));
}

/** The accounts a person belongs to (the account switcher). */
export async function listMyAccounts(db: Db, userId: string) {
  return db
    .select({ tenantId: tenants.id, name: tenants.name, role: memberships.role })
    .from(memberships)
    .innerJoin(tenants, eq(tenants.id, memberships.tenantId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt), asc(tenants.id));
}

/**
 * The checks every change of a member shares (docs/team.md#roles), with the account's owners locked so two
 * concurrent demotions cannot leave it without one: nobody changes themselves; an admin does not touch an owner;
 * the last owner stays an owner.
 */
async function lockTarget(tx: Tx, by: ActingMember, userId: string, leavesOwner: boolean) {
  if (by.actor.type === "member" && by.actor.id === userId) throw new Forbidden("You cannot change your own role or remove yourself.", "forbidden");
  const owners = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.tenantId, by.tenantId), eq(memberships.role, "owner")))
    .for("update");
  const [target] = await tx
    .select({ role: memberships.role, email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.tenantId, by.tenantId), eq(memberships.userId, userId)));
  if (!target) throw new NotFound("No member with this id in the account.");
  if (target.role === "owner" && by.role !== undefined && !roleAtLeast(by.role, "owner")) {
    throw new Forbidden("This needs the role owner: only an owner can change or remove an owner.", "forbidden");
  }
  if (target.role === "owner" && leavesOwner && owners.length <= 1) throw new Conflict("The account's last owner cannot be removed or demoted.", "last_owner");
  return target;
}

/** A new role; the member's sessions end at once (their next call is 401). */
export async function changeRole(db: Db, by: ActingMember, input: { userId: string; role: MemberRole }) {
  assertMayGrant(by, input.role);
  await db.transaction(async (tx) => {
    const target = await lockTarget(tx, by, input.userId, input.role !== "owner");
    if (target.role === input.role) return;
    await tx
      .update(memberships)
      .set({ role: input.role })
      .where(and(eq(memberships.tenantId, by.tenantId), eq(memberships.userId, input.userId)));
    await endSessions(tx, { userId: input.userId });
    await recordAudit(tx, { tenantId: by.tenantId, actor: by.actor, action: `member.role_${input.role}`, target: input.userId, ip: by.ip, at: by.now });
  });
}

/** Removes a member from the account (their user stays, for their other accounts); their sessions end at once. */
export async function removeMember(db: Db, by: ActingMember, userId: string) {
  await db.transaction(async (tx) => {
    await lockTarget(tx, by, userId, true);
    await tx.delete(memberships).where(and(eq(memberships.tenantId, by.tenantId), eq(memberships.userId, userId)));
    await endSessions(tx, { userId });
    await recordAudit(tx, { tenantId: by.tenantId, actor: by.actor, action: "member.remove", target: userId, ip: by.ip, at: by.now });
  });
}

/** The operator's `add-member`: an existing user joins the account with a role (no invitation). */
export async function addMember(db: Db, by: ActingMember, input: { email: string; role: MemberRole }) {
  return db.transaction(async (tx) => {
    const [user] = await tx.select({ id: users.id }).from(users).where(eq(users.email, input.email.trim().toLowerCase()));
    if (!user) throw new NotFound(`No user with the e-mail ${input.email}: they sign up first (or use an invitation).`);
    const [row] = await tx
      .insert(memberships)
      .values({ tenantId: by.tenantId, userId: user.id, role: input.role, createdAt: by.now })
      .onConflictDoNothing()
      .returning();
    if (!row) throw new Conflict(`${input.email} is already a member of this account.`, "already_member");
    await recordAudit(tx, { tenantId: by.tenantId, actor: by.actor, action: "member.add", target: user.id, ip: by.ip, at: by.now });
    return { userId: user.id };
  });
}

/** Whether `userId` belongs to `tenantId` (the account switcher checks it before issuing the session). */
export async function isMember(db: Db, userId: string, tenantId: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.tenantId, tenantId)));
  return row !== undefined;
}
