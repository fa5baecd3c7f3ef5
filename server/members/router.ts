import { eq } from "drizzle-orm";
import { z } from "zod";
import { users } from "../../db/schema";
import { actorOf } from "../audit/record-audit";
import { sessionCookie } from "../auth/session";
import { Forbidden, RateLimited, Unauthorized } from "../errors";
import { consume } from "../http/rate-limit";
import { type Context, publicProcedure, router, selfProcedure, sessionProcedure } from "../trpc";
import { type ActingMember, acceptInvitation, inviteMember, listInvitations, previewInvitation, revokeInvitation } from "./invitations";
import { changeRole, isMember, listMembers, listMyAccounts, removeMember } from "./manage-members";
import {
  changeRoleInput,
  invitationToken,
  inviteMemberInput,
  removeMemberInput,
  revokeInvitationInput,
  signUpWithInvitationInput,
  switchAccountInput,
} from "./schema";
import { signUpWithInvitation } from "./sign-up-with-invitation";

const acting = (ctx: Context & { tenantId: string }): ActingMember => ({
  tenantId: ctx.tenantId,
  role: ctx.caller.kind === "session" ? ctx.caller.role : undefined,
  actor: actorOf(ctx.caller),
  ip: ctx.clientIp ?? null,
  now: ctx.now,
});

/** This browser's session moves to `tenantId` (a new cookie, same user and session version). */
async function moveSession(ctx: Context, userId: string, tenantId: string) {
  const [user] = await ctx.db.select().from(users).where(eq(users.id, userId));
  if (!user) throw new Unauthorized("Sign in to the dashboard first.", "session_required");
  ctx.resHeaders?.append("set-cookie", await sessionCookie({ ...user, tenantId }, ctx.now));
}

/** The Equipe page and the account switcher (docs/team.md). Dashboard only: no OpenAPI. */
export const membersRouter = router({
  list: sessionProcedure("admin").query(async ({ ctx }) => ({
    members: await listMembers(ctx.db, ctx.tenantId),
    invitations: await listInvitations(ctx.db, ctx.tenantId, ctx.now),
  })),

  /** The link is answered once: only its hash is kept. */
  invite: sessionProcedure("admin")
    .input(inviteMemberInput)
    .mutation(async ({ ctx, input }) => {
      const inv = await inviteMember(ctx.db, acting(ctx), input);
      return { id: inv.id, path: inv.path, expiresAt: inv.expiresAt };
    }),

  revokeInvitation: sessionProcedure("admin")
    .input(revokeInvitationInput)
    .mutation(async ({ ctx, input }) => {
      await revokeInvitation(ctx.db, acting(ctx), input.id);
      return { revoked: true as const };
    }),

  changeRole: sessionProcedure("admin")
    .input(changeRoleInput)
    .mutation(async ({ ctx, input }) => {
      await changeRole(ctx.db, acting(ctx), input);
      return { changed: true as const };
    }),

  remove: sessionProcedure("admin")
    .input(removeMemberInput)
    .mutation(async ({ ctx, input }) => {
      await removeMember(ctx.db, acting(ctx), input.userId);
      return { removed: true as const };
    }),

  /** What /convite/{token} shows; `valid: false` for an unknown, used, revoked or expired link. */
  invitation: publicProcedure.input(z.object({ token: invitationToken })).query(async ({ ctx, input }) => {
    const inv = await previewInvitation(ctx.db, input.token, ctx.now);
    return inv ? { valid: true as const, ...inv } : { valid: false as const };
  }),

  /** Sign-up through an invitation (the browser then signs in with the invited e-mail). */
  signUpWithInvitation: publicProcedure.input(signUpWithInvitationInput).mutation(async ({ ctx, input }) => {
    const limit = await consume(ctx.db, "signUpAddress", ctx.clientIp ?? "unknown");
    if (!limit.allowed) {
      throw new RateLimited(`Too many sign-ups from this address; retry in ${limit.retryAfterSeconds} s.`, limit.retryAfterSeconds, "sign_up_limited");
    }
    const { email } = await signUpWithInvitation(ctx.db, input, ctx.clientIp ?? null, ctx.now);
    return { email };
  }),

  /** A signed-in person accepts: they join, and this session moves to that account. */
  accept: selfProcedure.input(z.object({ token: invitationToken })).mutation(async ({ ctx, input }) => {
    const [user] = await ctx.db.select({ email: users.email }).from(users).where(eq(users.id, ctx.userId));
    const tenantId = await ctx.db.transaction((tx) =>
      acceptInvitation(tx, input.token, { id: ctx.userId, email: user?.email ?? "" }, ctx.clientIp ?? null, ctx.now),
    );
    await moveSession(ctx, ctx.userId, tenantId);
    return { tenantId };
  }),

  /** The accounts of the signed-in person, for the switcher; `current` marks the session's. */
  myAccounts: selfProcedure.query(async ({ ctx }) => (await listMyAccounts(ctx.db, ctx.userId)).map((a) => ({ ...a, current: a.tenantId === ctx.tenantId }))),

  /** The account switcher: the session's tenant changes only to one the person belongs to (checked again on every request). */
  switchAccount: selfProcedure.input(switchAccountInput).mutation(async ({ ctx, input }) => {
    if (!(await isMember(ctx.db, ctx.userId, input.tenantId))) throw new Forbidden("You are not a member of this account.", "forbidden");
    await moveSession(ctx, ctx.userId, input.tenantId);
    return { tenantId: input.tenantId };
  }),
});
