import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels, segmentGroups, segments } from "../../db/schema";
import { tableAs } from "../../db/relation";
import { campaignContent, type CampaignContent, contentText, contentVariant } from "../dispatch/campaign-content";
import { providerMessage, type MessageSource } from "../dispatch/build-message";
import { BadRequest, RateLimited } from "../errors";
import { consume } from "../http/rate-limit";
import { newId } from "../ids";
import { type MessagingProvider, type OutboundMessage, ProviderOutcomeUnknownError } from "../messaging/provider";
import { sendableChannelSql } from "../numbers/health";
import { segmentNotFound } from "../segments/find-segment";
import { getSettings } from "../settings/get-settings";
import { testGroupsMax } from "../settings/schema";
import { lookUpTestGroups } from "../settings/test-groups";

export interface TestSend {
  messageType: MessageSource["messageType"];
  content: Omit<CampaignContent, "variations">;
  linkPreview?: boolean;
  mentionAll: boolean;
  /** Preview the texts as this segment's first groups would get them. */
  segmentId?: string;
}

export interface TestSendResult {
  id_group: string;
  id_channel: string;
  status: "sent" | "failed" | "unknown";
  error?: string;
  text: string;
  preview_of?: string;
}

/**
 * "Enviar teste" (docs/decisions.md#test-send): the message goes once, now and unpaced, to each of the settings'
 * test groups through the provider, under a delivery key of its own (`test_<uuid>:<group>`) that no campaign has,
 * so no campaign, delivery, channel budget or partner statistic counts it. Target i gets variant i of a text with
 * variations, with its own name in {{grupo}} — or, given `segmentId`, the name of the segment's i-th group. At most
 * 10 per 10 minutes per tenant (a 429 after the test groups were found, before anything is sent).
 */
export async function sendTest(db: Db, provider: MessagingProvider, tenantId: string, input: TestSend, now: Date): Promise<TestSendResult[]> {
  const settings = await getSettings(db, tenantId);
  if (settings.test_groups.length === 0) {
    throw new BadRequest("test_groups: no test groups in the settings; add up to 5 with edit-settings (test_groups)", "no_test_groups");
  }
  const previewOf = input.segmentId ? await segmentGroupsToPreview(db, tenantId, input.segmentId) : [];
  const limit = await consume(db, "sendTest", tenantId);
  if (!limit.allowed) {
    throw new RateLimited(`Too many test sends: at most 10 per 10 minutes; retry in ${limit.retryAfterSeconds} s.`, limit.retryAfterSeconds);
  }
  const targets = await lookUpTestGroups(db, provider, tenantId, settings.test_groups, "settings.test_groups");
  const sendable = await sendableChannels(
    db,
    targets.map((t) => t.id_channel),
    now,
  );
  const content = campaignContent(input.content);
  const keyPrefix = newId("test");
  const results: TestSendResult[] = [];
  const messages: { index: number; message: OutboundMessage }[] = [];
  targets.forEach((t, i) => {
    const preview = previewOf.length ? previewOf[i % previewOf.length] : undefined;
    const texts = contentVariant(content, i, { groupName: preview?.name ?? t.name ?? "", at: now });
    const result: TestSendResult = { id_group: t.id_group, id_channel: t.id_channel, status: "failed", text: contentText(texts), preview_of: preview?.groupId };
    results.push(result);
    if (t.problem) result.error = t.problem.message;
    else if (!sendable.has(t.id_channel)) result.error = `channel ${t.id_channel} cannot send now (offline, or a limit of its number)`;
    else {
      const source = { messageType: input.messageType, content: texts, linkPreview: input.linkPreview ?? null, mentionAll: input.mentionAll };
      messages.push({
        index: i,
        message: providerMessage(source, { channelId: t.id_channel, groupId: t.id_group, deliveryKey: `${keyPrefix}:${t.id_group}` }, settings),
      });
    }
  });
  const outcomes = messages.length ? await provider.sendMany(messages.map((m) => m.message)) : [];
  outcomes.forEach((o, j) => {
    const result = results[messages[j].index];
    if (o.ok) result.status = "sent";
    else {
      result.status = o.error instanceof ProviderOutcomeUnknownError ? "unknown" : "failed";
      result.error = o.error.message.slice(0, 500);
    }
  });
  return results;
}

/** The segment's first groups (as many as test groups may be), in its order: whose texts a preview shows. */
async function segmentGroupsToPreview(db: Db, tenantId: string, segmentId: string) {
  const [segment] = await db
    .select({ id: segments.id })
    .from(segments)
    .where(and(eq(segments.id, segmentId), eq(segments.tenantId, tenantId)));
  if (!segment) throw segmentNotFound(segmentId);
  return db
    .select({ groupId: segmentGroups.groupId, name: segmentGroups.name })
    .from(segmentGroups)
    .where(eq(segmentGroups.segmentId, segmentId))
    .orderBy(asc(segmentGroups.position))
    .limit(testGroupsMax);
}

async function sendableChannels(db: Db, ids: string[], now: Date) {
  if (ids.length === 0) return new Set<string>();
  const rows = await db
    .select({ id: sql<string>`ch.id`, sendable: sendableChannelSql(tableAs(channels, "ch"), now) })
    .from(sql`${channels} ch`)
    .where(inArray(sql`ch.id`, ids));
  return new Set(rows.filter((r) => r.sendable).map((r) => r.id));
}
