import { z } from "zod";
import { audited } from "../audit/audited";
import { accountPartnerForbiddenProcedure, accountProcedure, router, sessionProcedure } from "../trpc";
import { listDeliveries, redeliver } from "./deliver-webhooks";
import {
  editWebhooksInput,
  editWebhooksOutput,
  listDeliveriesInput,
  listWebhooksOutput,
  rotateSecretOutput,
  testWebhookInput,
  testWebhookOutput,
} from "./schema";
import { recentTests, testWebhook } from "./test-webhook";
import { wakeWebhooks } from "./wake";
import { editWebhooks, listWebhooks, rotateSigningSecret } from "./webhook-config";

const tags = ["Webhooks"];

const deliveryDoc = `Events are POSTed as JSON \`{"type","timestamp","data"}\` and signed as [Standard Webhooks](https://www.standardwebhooks.com/):
headers \`webhook-id\` (the same on every retry of one event), \`webhook-timestamp\` (fresh per attempt) and \`webhook-signature\`
(\`v1,<base64 HMAC-SHA256 of "id.timestamp.body">\`; two space-separated signatures for 24 h after a secret rotation).
Verify with \`new Webhook(signing_secret).verify(body, headers)\` from the \`standardwebhooks\` package.
2xx is success; anything else (3xx included: redirects are not followed) is retried after about 5 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h
and 24 h (±20 % jitter, never sooner than \`Retry-After\`), then given up; 10 s time-out per attempt; 410 Gone disables the URL.
Events of one campaign (or channel, or launch) arrive in order: a failing one holds back the later ones until it succeeds or is given up.

Partner apps configure their own webhook URL in the developer portal, not here. An app receives \`campaign_status\` and \`campaign_progress\`
of every account that authorized it with \`campaigns:read\` (while that authorization is alive), signed with the app's own secret, with
\`sub\` (the account's id) beside \`type\`, \`timestamp\` and \`data\`; those copies are not in this account's configuration or delivery log.
\`channel_status\` and \`group_activity\` (launches: \`group_created\`, \`group_full\`, \`link_broken\`, \`members_changed\`) go to the account only.`;

export const webhooksRouter = router({
  list: accountProcedure("admin")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-webhooks",
        tags,
        summary: "The account's webhook URLs and signing secret",
        description: `Account owner only. A disabled URL is null. The signing secret is created on first use.\n\n${deliveryDoc}`,
        protect: true,
        errorResponses: [401, 429, 500],
      },
    })
    .output(listWebhooksOutput)
    .query(async ({ ctx }) => ({ success: true as const, webhooks: await listWebhooks(ctx.db, ctx.tenantId) })),

  edit: accountProcedure("admin")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/external/edit-webhooks",
        tags,
        summary: "Change webhook URLs (partial)",
        description:
          'Partial merge of the four URL fields; `""` or null disables one. Only http(s) URLs; private, loopback, link-local and reserved ' +
          "targets are refused (400 naming the field), here and again when connecting, after DNS. `updated` lists the fields whose value changed. " +
          "The answer never contains the signing secret. An empty body, or an unknown property, is 400.",
        protect: true,
        errorResponses: [400, 401, 500],
      },
    })
    .input(editWebhooksInput)
    .output(editWebhooksOutput)
    .mutation(async ({ ctx, input }) => {
      const { updated, webhooks } = await audited(ctx, "webhooks.edit", (tx) => editWebhooks(tx, ctx.tenantId, input, ctx.now));
      return { success: true as const, message: "Webhooks updated", updated, webhooks };
    }),

  // The account owner; a partner app is 403 (spec), not 401 as on the other owner endpoints.
  test: accountPartnerForbiddenProcedure("admin")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/test-webhook/{type}",
        tags,
        summary: "Send a test payload to the type's URL",
        description:
          'Sends a signed sample event with `"test": true` to the URL of `type` and answers `status`: the receiver\'s HTTP status, 0 when it ' +
          "could not be reached (refused, time-out, blocked address). 400 when the type has no URL. At most 5 tests per type per 10 minutes: " +
          'then 400 `{"code":"bad_request","limitExceeded":true,"limitType":"test_webhook","current":5,"max":5}`. Partner apps get 403.',
        protect: true,
        errorResponses: [400, 401, 403, 429, 500],
      },
    })
    .input(testWebhookInput)
    .output(testWebhookOutput)
    .mutation(async ({ ctx, input }) => {
      const result = await testWebhook(ctx.db, ctx.tenantId, input.type, ctx.now);
      const ok = result.status >= 200 && result.status < 300;
      const message = ok ? "Test webhook delivered" : result.status === 0 ? `Receiver unreachable: ${result.error}` : `Receiver answered HTTP ${result.status}`;
      return { success: true as const, message, status: result.status };
    }),

  /** Dashboard only: a new signing secret (the old one keeps signing for 24 h). */
  rotateSecret: sessionProcedure("admin")
    .output(rotateSecretOutput)
    .mutation(({ ctx }) => audited(ctx, "webhooks.rotate_secret", (tx) => rotateSigningSecret(tx, ctx.tenantId, ctx.now))),

  deliveries: sessionProcedure("admin")
    .input(listDeliveriesInput)
    .query(({ ctx, input }) => listDeliveries(ctx.db, ctx.tenantId, input)),

  recentTests: sessionProcedure("admin").query(({ ctx }) => recentTests(ctx.db, ctx.tenantId)),

  redeliver: sessionProcedure("admin")
    .input(z.object({ id: z.number().int().positive() }))
    .mutation(async ({ ctx, input }) => {
      await redeliver(ctx.db, ctx.tenantId, input.id, ctx.now);
      wakeWebhooks();
      return { ok: true };
    }),
});
