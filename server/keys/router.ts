import { z } from "zod";
import { audited } from "../audit/audited";
import { name, text } from "../text";
import { router, sessionProcedure } from "../trpc";
import { createApiKey } from "./create-api-key";
import { listApiKeys, revokeApiKey } from "./manage-api-keys";

const keySummary = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
  revokedAt: z.iso.datetime().nullable(),
});

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** Dashboard only: keys are managed by a signed-in person, never by another key. */
export const apiKeysRouter = router({
  list: sessionProcedure("admin")
    .output(z.array(keySummary))
    .query(async ({ ctx }) =>
      (await listApiKeys(ctx.db, ctx.tenantId)).map((k) => ({
        ...k,
        createdAt: k.createdAt.toISOString(),
        lastUsedAt: iso(k.lastUsedAt),
        revokedAt: iso(k.revokedAt),
      })),
    ),
  create: sessionProcedure("admin")
    .input(z.object({ name: name() }))
    .output(z.object({ id: z.string(), name: z.string(), prefix: z.string(), apiKey: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const k = await audited(
        ctx,
        "api_key.create",
        (tx) => createApiKey(tx, ctx.tenantId, input.name),
        (r) => r.id,
      );
      return { id: k.id, name: k.name, prefix: k.prefix, apiKey: k.apiKey };
    }),
  revoke: sessionProcedure("admin")
    .input(z.object({ id: text({ max: 200, min: 1 }) }))
    .output(z.object({ success: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await audited(
        ctx,
        "api_key.revoke",
        (tx) => revokeApiKey(tx, ctx.tenantId, input.id, ctx.now),
        () => input.id,
      );
      return { success: true as const };
    }),
});
