import { z } from "zod";
import { audited } from "../audit/audited";
import { text } from "../text";
import { router, sessionProcedure } from "../trpc";
import { listAuthorizedApps, revokeAppAccess } from "./authorized-apps";
import { appSummary, listPartnerApps, registerPartnerApp, rotateClientSecret, setWebhookUrl } from "./partner-apps";
import { authorizedAppSummary, partnerAppSummary, registerAppInput } from "./schema";
import { scopeCatalog } from "./scopes";
import { appWebhookSecret, rotateAppWebhookSecret } from "../webhooks/partner-webhooks";
import { rotateSecretOutput } from "../webhooks/schema";

const clientId = z.object({ client_id: text({ max: 200, min: 1 }) });

/** Dashboard only: the developer portal (apps this tenant built) and the apps this tenant authorized. */
export const partnerAppsRouter = router({
  scopes: sessionProcedure("admin")
    .output(z.array(z.object({ scope: z.string(), description: z.string(), sensitive: z.boolean(), autoApproved: z.boolean() })))
    .query(() => Object.entries(scopeCatalog).map(([scope, s]) => ({ scope, ...s }))),

  list: sessionProcedure("admin")
    .output(z.array(partnerAppSummary))
    .query(async ({ ctx }) => (await listPartnerApps(ctx.db, ctx.tenantId)).map(appSummary)),

  register: sessionProcedure("admin")
    .input(registerAppInput)
    .output(z.object({ app: partnerAppSummary, client_secret: z.string().nullable() }))
    .mutation(async ({ ctx, input }) => {
      const { app, clientSecret } = await audited(
        ctx,
        "partner_app.register",
        (tx) => registerPartnerApp(tx, ctx.tenantId, input),
        (r) => r.app.id,
      );
      return { app: appSummary(app), client_secret: clientSecret ?? null };
    }),

  rotateSecret: sessionProcedure("admin")
    .input(clientId)
    .output(z.object({ client_id: z.string(), client_secret: z.string() }))
    .mutation(({ ctx, input }) =>
      audited(
        ctx,
        "partner_app.rotate_secret",
        (tx) => rotateClientSecret(tx, ctx.tenantId, input.client_id, ctx.now),
        () => input.client_id,
      ),
    ),

  setWebhookUrl: sessionProcedure("admin")
    .input(clientId.extend({ webhook_url: registerAppInput.shape.webhook_url }))
    .output(z.object({ success: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await audited(
        ctx,
        "partner_app.webhook_edit",
        (tx) => setWebhookUrl(tx, ctx.tenantId, input.client_id, input.webhook_url || null),
        () => input.client_id,
      );
      return { success: true as const };
    }),

  /** The app's webhook signing secret (made on first use): its deliveries carry Standard Webhooks signatures. */
  webhookSecret: sessionProcedure("admin")
    .input(clientId)
    .output(z.object({ signing_secret: z.string() }))
    .query(({ ctx, input }) => appWebhookSecret(ctx.db, ctx.tenantId, input.client_id)),

  rotateWebhookSecret: sessionProcedure("admin")
    .input(clientId)
    .output(rotateSecretOutput)
    .mutation(({ ctx, input }) =>
      audited(
        ctx,
        "partner_app.rotate_webhook_secret",
        (tx) => rotateAppWebhookSecret(tx, ctx.tenantId, input.client_id, ctx.now),
        () => input.client_id,
      ),
    ),

  authorized: sessionProcedure("admin")
    .output(z.array(authorizedAppSummary))
    .query(({ ctx }) => listAuthorizedApps(ctx.db, ctx.tenantId)),

  revokeAccess: sessionProcedure("admin")
    .input(clientId)
    .output(z.object({ success: z.literal(true), revoked_grants: z.number().int() }))
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      revoked_grants: await audited(
        ctx,
        "partner_app.revoke_access",
        (tx) => revokeAppAccess(tx, ctx.tenantId, input.client_id, ctx.now),
        () => input.client_id,
      ),
    })),
});
