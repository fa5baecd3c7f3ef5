import { randomUUID } from "node:crypto";
import { and, count, desc, eq, gt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { webhookAttempts, webhookConfigs } from "../../db/schema";
import { BadRequest } from "../errors";
import { webhookBody, webhookHeaders } from "./deliver-webhooks";
import type { EventData } from "./events";
import { urlField, type WebhookType } from "./schema";
import { sendWebhook } from "./send-webhook";
import { configuredUrl, getWebhookConfig, signingSecrets } from "./webhook-config";

export const TEST_LIMIT = { max: 5, windowMs: 10 * 60_000 };

const sampleData: { [T in WebhookType]: EventData<T> } = {
  campaign_status: {
    id_campaign: "campaign_00000000-0000-4000-8000-000000000000",
    name: "Campanha de teste",
    status: "sending",
    previous_status: "pending",
    groups: { total: 10, sent: 0, pending: 10, failed: 0 },
  },
  campaign_progress: {
    id_campaign: "campaign_00000000-0000-4000-8000-000000000000",
    name: "Campanha de teste",
    status: "sending",
    groups: { total: 10, sent: 4, pending: 6, failed: 0 },
  },
  channel_status: {
    id_channel: "channel_00000000-0000-4000-8000-000000000000",
    name: "Canal de teste",
    status: "connected",
    previous_status: "connecting",
    health: {
      state: "ok",
      reason: null,
      since: null,
      until: null,
      sent_today: 0,
      daily_cap: null,
      groups_created_today: 0,
      group_create_cap: 20,
      warmup_day: null,
    },
  },
  group_activity: {
    event: "members_changed",
    id_launch: "launch_00000000-0000-4000-8000-000000000000",
    id_group: "120363000000000000@g.us",
    joined: [{ participant: "5511999990001", staff: false }],
    left: [],
    members: 12,
  },
};

/**
 * Sends a signed test payload (`"test": true`) to the type's URL now and answers the receiver's status
 * (0 when unreachable). At most 5 per type per 10 minutes per tenant; the attempt is logged like any other.
 */
export async function testWebhook(db: Db, tenantId: string, type: WebhookType, now: Date) {
  const config = await getWebhookConfig(db, tenantId);
  const url = configuredUrl(config, type);
  if (!url) throw new BadRequest(`type: no URL is configured for ${type}; set ${urlField[type]} with edit-webhooks first`, "webhook_not_configured");
  // The tenant's config row is locked while counting, so concurrent tests cannot both take the last slot.
  const attemptId = await db.transaction(async (tx) => {
    await tx.select({ t: webhookConfigs.tenantId }).from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId)).for("update");
    const [{ n }] = await tx
      .select({ n: count() })
      .from(webhookAttempts)
      .where(
        and(
          eq(webhookAttempts.tenantId, tenantId),
          eq(webhookAttempts.isTest, true),
          eq(webhookAttempts.type, type),
          gt(webhookAttempts.attemptedAt, new Date(now.getTime() - TEST_LIMIT.windowMs)),
        ),
      );
    if (n >= TEST_LIMIT.max) {
      throw new BadRequest(`At most ${TEST_LIMIT.max} test webhooks per type every 10 minutes; try again later.`, "bad_request", {
        limitExceeded: true,
        limitType: "test_webhook",
        current: n,
        max: TEST_LIMIT.max,
      });
    }
    const [row] = await tx
      .insert(webhookAttempts)
      .values({ tenantId, type, url, isTest: true, attemptedAt: now, status: 0, durationMs: 0 })
      .returning({ id: webhookAttempts.id });
    return row.id;
  });
  const body = webhookBody({ type, timestamp: now.toISOString(), test: true, data: sampleData[type] });
  const result = await sendWebhook(url, body, webhookHeaders(signingSecrets(config, now), `msg_test_${randomUUID()}`, now, body));
  await db.update(webhookAttempts).set({ status: result.status, durationMs: result.durationMs, error: result.error }).where(eq(webhookAttempts.id, attemptId));
  return result;
}

/** The latest test sends, for the dashboard. */
export async function recentTests(db: Db, tenantId: string, limit = 20) {
  const rows = await db
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.tenantId, tenantId), eq(webhookAttempts.isTest, true)))
    .orderBy(desc(webhookAttempts.id))
    .limit(limit);
  return rows.map((a) => ({ type: a.type, at: a.attemptedAt.toISOString(), url: a.url, status: a.status, durationMs: a.durationMs, error: a.error }));
}
