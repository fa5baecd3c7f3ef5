import { randomBytes } from "node:crypto";
import { and, desc, eq, gt, isNull } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { invitations, type MemberRole, memberships, tenants } from "../../db/schema";
import { type AuditActor, recordAudit } from "../audit/record-audit";
import { Forbidden, NotFound } from "../errors";
import { newId } from "../ids";
import { sha256Hex } from "../keys/api-key-format";
import { roleAtLeast } from "./roles";

/** docs/team.md#invitations: a link is good for 7 days, once. */
export const invitationDays = 7;

export interface ActingMember {
  tenantId: string;
  /** The inviter's role; undefined for the admin CLI or an API key (the whole account). */
  role?: MemberRole;
  actor: AuditActor;
  ip?: string | null;
  now: Date;
}

/** Only an owner makes another owner (docs/team.md#roles: an admin cannot touch owners). */
export function assertMayGrant(by: ActingMember, role: MemberRole) {
  if (role === "owner" && by.role !== undefined && !roleAtLeast(by.role, "owner")) throw new Forbidden("Only an owner can make someone an owner.", "forbidden");
}

/** An invitation by e-mail and role: the token is returned once (the link to copy) and stored only as its hash. */
export async function inviteMember(db: Db, by: ActingMember, input: { email: string; role: MemberRole }) {
  assertMayGrant(by, input.role);
  const token = randomBytes(32).toString("base64url");
  const id = newId("inv");
  const expiresAt = new Date(by.now.getTime() + invitationDays * 24 * 60 * 60 * 1000);
  await db.transaction(async (tx) => {
    await tx.insert(invitations).values({
      id,
      tenantId: by.tenantId,
      email: input.email.trim().toLowerCase(),
      role: input.role,
      tokenHash: sha256Hex(token),
      invitedBy: by.actor.id,
      expiresAt,
    });
    await recordAudit(tx, { tenantId: by.tenantId, actor: by.actor, action: "member.invite", target: id, ip: by.ip, at: by.now });
  });
  return { id, token, path: `/convite/${token}`, expiresAt };
}

/** Pending invitations (not used, revoked or expired), newest first. */
export async function listInvitations(db: Db, tenantId: string, now: Date) {
  return db
    .select({ id: invitations.id, email: invitations.email, role: invitations.role, expiresAt: invitations.expiresAt, createdAt: invitations.createdAt })
    .from(invitations)
    .where(and(eq(invitations.tenantId, tenantId), isNull(invitations.usedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now)))
    .orderBy(desc(invitations.createdAt));
}

export async function revokeInvitation(db: Db, by: ActingMember, id: string) {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .update(invitations)
      .set({ revokedAt: by.now })
      .where(and(eq(invitations.id, id), eq(invitations.tenantId, by.tenantId), isNull(invitations.usedAt), isNull(invitations.revokedAt)))
      .returning({ id: invitations.id });
    if (!row) throw new NotFound("No pending invitation with this id.");
    await recordAudit(tx, { tenantId: by.tenantId, actor: by.actor, action: "member.invitation_revoke", target: id, ip: by.ip, at: by.now });
  });
}

/** What the invitation page shows before the person signs up or in; undefined when the link is unknown, used, revoked or expired. */
export async function previewInvitation(db: Db, token: string, now: Date) {
  const [row] = await db
    .select({ email: invitations.email, role: invitations.role, accountName: tenants.name, expiresAt: invitations.expiresAt })
    .from(invitations)
    .innerJoin(tenants, eq(tenants.id, invitations.tenantId))
    .where(and(eq(invitations.tokenHash, sha256Hex(token)), isNull(invitations.usedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now)));
  return row;
}

/**
 * Spends the invitation (once: the update that marks it used is the check) and makes `userId` a member with its role,
 * in `tx`. A person already in the account keeps their role. Returns the account's id.
 */
export async function acceptInvitation(tx: Tx, token: string, user: { id: string; email: string }, ip: string | null, now: Date): Promise<string> {
  const [inv] = await tx
    .update(invitations)
    .set({ usedAt: now, usedBy: user.id })
    .where(and(eq(invitations.tokenHash, sha256Hex(token)), isNull(invitations.usedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now)))
    .returning({ id: invitations.id, tenantId: invitations.tenantId, role: invitations.role });
  if (!inv) throw new NotFound("This invitation link is not valid: it was used, revoked or has expired.");
  await tx.insert(memberships).values({ tenantId: inv.tenantId, userId: user.id, role: inv.role, createdAt: now }).onConflictDoNothing();
  await recordAudit(tx, {
    tenantId: inv.tenantId,
    actor: { type: "member", id: user.id, label: user.email },
    action: "member.join",
    target: inv.id,
    ip,
    at: now,
  });
  return inv.tenantId;
}
