import { z } from "zod";
import { publicProcedure, router } from "../trpc";
import { createTenant } from "./create-tenant";

export const signUpInput = z.object({
  name: z.string().trim().min(1, "is required").max(120),
  email: z.email("must be an email address"),
  password: z.string().min(8, "must have at least 8 characters").max(200),
});

export const accountRouter = router({
  /** Dashboard sign-up: a tenant, its owner and a first API key; the browser then signs in. */
  signUp: publicProcedure
    .input(signUpInput)
    .output(z.object({ tenantId: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { tenantId } = await createTenant(ctx.db, input);
      return { tenantId };
    }),
});
