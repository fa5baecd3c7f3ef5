import { z } from "zod";
import { RateLimited } from "../errors";
import { consume } from "../http/rate-limit";
import { name } from "../text";
import { passwordMaxLength, passwordMinLength } from "../text-limits";
import { publicProcedure, router, selfProcedure } from "../trpc";
import { changePassword } from "./change-password";
import { createTenant } from "./create-tenant";
import { sessionCookie } from "./session";

/** A new password: at least 10 characters (docs/security.md, "Dashboard sign-in throttling"). */
const newPassword = () =>
  z
    .string()
    .min(passwordMinLength, `must have at least ${passwordMinLength} characters`)
    .max(passwordMaxLength, `must be at most ${passwordMaxLength} characters`);

export const signUpInput = z.object({
  name: name(),
  email: z.email("must be an email address").max(254, "must be at most 254 characters"),
  password: newPassword(),
});

export const changePasswordInput = z.object({
  currentPassword: z.string().min(1, "is required").max(passwordMaxLength, `must be at most ${passwordMaxLength} characters`),
  newPassword: newPassword(),
});

export const accountRouter = router({
  /** Dashboard sign-up: a tenant, its owner and a first API key; the browser then signs in. */
  signUp: publicProcedure
    .input(signUpInput)
    .output(z.object({ tenantId: z.string() }))
    .mutation(async ({ ctx, input }) => {
      // docs/decisions.md#limits-abuse-retention: sign-ups per client address per hour (each one hashes a password), counted before the work.
      const limit = await consume(ctx.db, "signUpAddress", ctx.clientIp ?? "unknown");
      if (!limit.allowed) {
        throw new RateLimited(`Too many sign-ups from this address; retry in ${limit.retryAfterSeconds} s.`, limit.retryAfterSeconds, "sign_up_limited");
      }
      const { tenantId } = await createTenant(ctx.db, input);
      return { tenantId };
    }),

  /**
   * The signed-in user's new password (docs/security.md, "Sessions"): the current one is checked and
   * throttled as a sign-in is; every other session of the user ends, and this one gets a new cookie.
   */
  changePassword: selfProcedure
    .input(changePasswordInput)
    .output(z.object({ changed: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const user = await changePassword(ctx.db, { userId: ctx.userId, ...input, ip: ctx.clientIp ?? "unknown" });
      ctx.resHeaders?.append("set-cookie", await sessionCookie(user, ctx.now));
      return { changed: true as const };
    }),
});
