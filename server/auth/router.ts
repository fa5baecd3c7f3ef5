import { z } from "zod";
import { name } from "../text";
import { publicProcedure, router } from "../trpc";
import { createTenant } from "./create-tenant";

export const signUpInput = z.object({
  name: name(),
  email: z.email("must be an email address").max(254, "must be at most 254 characters"),
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
