import { z } from "zod";
import { RateLimited } from "../errors";
import { consume } from "../http/rate-limit";
import { name } from "../text";
import { minPasswordLength } from "./password";
import { passwordMaxLength } from "../text-limits";
import { publicProcedure, router } from "../trpc";
import { createTenant } from "./create-tenant";

export const signUpInput = z.object({
  name: name(),
  email: z.email("must be an email address").max(254, "must be at most 254 characters"),
  password: z
    .string()
    .min(minPasswordLength, `must have at least ${minPasswordLength} characters`)
    .max(passwordMaxLength, `must be at most ${passwordMaxLength} characters`),
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
});
