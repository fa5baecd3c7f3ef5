import { audited } from "../audit/audited";
import { z } from "zod";
import { accountProcedure, router, sessionProcedure } from "../trpc";
import { createIntegration, createIntegrationViaApi } from "./create-integration";
import { editIntegration } from "./edit-integration";
import { hookUrl, tenantHooksToken } from "./hook-url";
import { integrationView } from "./integration-view";
import { deleteIntegration, listIntegrations } from "./list-integrations";
import { rotateHooksToken } from "./rotate-hooks-token";
import { createIntegrationInput, editIntegrationInput, integration, integrationOutput, integrationType } from "./schema";
import { credentialFields, integrationTypes } from "./types";

const tags = ["Integrations"];

export const integrationsRouter = router({
  create: accountProcedure("admin")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-integrations",
        tags,
        summary: "Create a marketplace integration (later phase: validates, then answers 501)",
        description:
          "Validated like a real create — 401, then 400 naming the field (type, credentials.<field>), then 409 when the type " +
          "already exists — and then answered 501 `not_implemented`: nothing is stored, so retrying is safe. Integrations are " +
          "created in the dashboard today; edit-integrations changes them. One integration per type.",
        protect: true,
        errorResponses: [400, 401, 409, 429, 500, 501],
      },
    })
    .input(createIntegrationInput)
    .output(integrationOutput)
    .mutation(async ({ ctx, input }) => {
      await createIntegrationViaApi(ctx.db, ctx.tenantId, input.type);
      throw new Error("unreachable");
    }),

  edit: accountProcedure("admin")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/external/edit-integrations",
        tags,
        summary: "Merge credentials into an integration",
        description:
          "`credentials` is merged into the stored ones (encrypted at rest); the answer says which fields are set, never a value, and " +
          "`webhook_url`: the URL to register as the marketplace's webhook, whose purchases and refunds become the buyers of your launches " +
          "(Hotmart: set `hottok`; Kiwify: set `webhook_token`, the token of the webhook registered in Kiwify). 404 when the type is not configured.",
        protect: true,
        errorResponses: [400, 401, 404, 500],
      },
    })
    .input(editIntegrationInput)
    .output(integrationOutput)
    .mutation(async ({ ctx, input }) => {
      const row = await audited(
        ctx,
        "integration.edit",
        (tx) => editIntegration(tx, ctx.tenantId, input, ctx.now),
        () => input.type,
      );
      return { success: true as const, message: "Integration updated", integration: integrationView(row, await tenantHooksToken(ctx.db, ctx.tenantId)) };
    }),

  rotateHooksToken: accountProcedure("admin")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/rotate-hooks-token",
        tags,
        summary: "Rotate the token of the account's marketplace webhook URLs",
        description:
          "Makes a new random token for every inbound marketplace webhook URL of the account (`/api/hooks/{type}/{token}`) and answers " +
          "the new URLs. The old URLs stop working at once (404): register the new ones in each marketplace. Use it when a URL leaked. " +
          "The dashboard's Integrações page has the same button.",
        protect: true,
        errorResponses: [401, 429, 500],
      },
    })
    .input(z.object({}))
    .output(
      z.object({
        success: z.literal(true),
        message: z.string(),
        webhook_urls: z
          .array(
            z.object({
              type: integrationType,
              webhook_url: z.string().nullable().meta({ description: "The new URL; null for a marketplace whose webhook is not accepted yet" }),
            }),
          )
          .meta({ description: "The account's new inbound webhook URL per marketplace" }),
      }),
    )
    .mutation(({ ctx }) => audited(ctx, "integration.rotate_hooks_token", (tx) => rotateHooksToken(tx, ctx.tenantId))),

  /** Dashboard: the tenant's integrations and the fields each type takes. */
  list: sessionProcedure("admin")
    .output(
      z.object({
        integrations: z.array(integration),
        types: z.array(
          z.object({
            type: integrationType,
            label: z.string(),
            required: z.array(z.string()),
            optional: z.array(z.string()),
            webhook_url: z.string().nullable(),
          }),
        ),
      }),
    )
    .query(async ({ ctx }) => {
      const token = await tenantHooksToken(ctx.db, ctx.tenantId);
      return {
        integrations: (await listIntegrations(ctx.db, ctx.tenantId)).map((row) => integrationView(row, token)),
        types: integrationTypes.map((type) => ({
          type,
          label: credentialFields[type].label,
          required: [...credentialFields[type].required],
          optional: [...credentialFields[type].optional],
          webhook_url: hookUrl(type, token),
        })),
      };
    }),

  /** Dashboard: creating is available here while the API answers 501. */
  createFromDashboard: sessionProcedure("admin")
    .input(createIntegrationInput)
    .output(integrationOutput)
    .mutation(async ({ ctx, input }) => {
      const row = await audited(
        ctx,
        "integration.create",
        (tx) => createIntegration(tx, ctx.tenantId, input, ctx.now),
        () => input.type,
      );
      return { success: true as const, message: "Integration created", integration: integrationView(row, await tenantHooksToken(ctx.db, ctx.tenantId)) };
    }),

  delete: sessionProcedure("admin")
    .input(z.object({ type: integrationType }))
    .output(z.object({ deleted: z.boolean() }))
    .mutation(async ({ ctx, input }) => ({
      deleted: await audited(
        ctx,
        "integration.delete",
        (tx) => deleteIntegration(tx, ctx.tenantId, input.type),
        () => input.type,
      ),
    })),
});
