import type { campaigns, deliveries } from "../../db/schema";
import { type CampaignContent, contentForGroup } from "./campaign-content";
import type { OutboundMessage } from "../messaging/provider";
import type { Settings } from "../settings/schema";
import { deliveryKeys, encodeDeliveryKey } from "./delivery-key";

/** What a message is built from of a delivery: its target, and what its text's variations fill in. */
type DeliveryTarget = Pick<typeof deliveries.$inferSelect, "channelId" | "groupId" | "groupName" | "updatedAt">;

/**
 * The provider message for one delivery: content, link preview decision, mention, forwarding. A text with
 * variations is rendered for the group: the variant of its delivery key, its name, and the attempt's time (the
 * claim's, `updatedAt`, which reconciliation reads back unchanged), so a look-up builds the very text that was
 * sent. Such a campaign is never forwarded: each group has its own text.
 */
export function buildMessage(
  c: typeof campaigns.$inferSelect,
  d: DeliveryTarget,
  settings: Settings,
  forwardOf?: OutboundMessage["forwardOf"],
): OutboundMessage {
  const deliveryKey = encodeDeliveryKey(c.id, d.groupId);
  const content = contentForGroup(c.content as CampaignContent, deliveryKey, { groupName: d.groupName, at: d.updatedAt ?? new Date() });
  return providerMessage(
    { campaignId: c.id, messageType: c.messageType, content, linkPreview: c.linkPreview, mentionAll: c.mentionAll },
    { channelId: d.channelId, groupId: d.groupId, deliveryKey },
    settings,
    content.variations ? undefined : forwardOf,
  );
}

/**
 * buildMessage for each of a loop's deliveries. Content without variations is the same for every group: the
 * message is built once and only its target (channel, group, key) differs, so a loop of 100 allocates 100 small
 * objects instead of 100 messages with their content (the loop's synchronous work before the provider's call).
 */
export function buildMessages(
  c: typeof campaigns.$inferSelect,
  batch: DeliveryTarget[],
  settings: Settings,
  forwardOf?: OutboundMessage["forwardOf"],
): OutboundMessage[] {
  const content = c.content as CampaignContent;
  if (content.variations || batch.length === 0) return batch.map((d) => buildMessage(c, d, settings, forwardOf));
  const keyOf = deliveryKeys(c.id);
  const source = { campaignId: c.id, messageType: c.messageType, content, linkPreview: c.linkPreview, mentionAll: c.mentionAll };
  const shared = providerMessage(source, { channelId: "", groupId: "", deliveryKey: "" }, settings, forwardOf);
  return batch.map((d) => ({ ...shared, channelId: d.channelId, groupId: d.groupId, deliveryKey: keyOf(d.groupId) }));
}

/** What is sent, whatever sends it (a campaign's delivery, a test send). `content`: its texts as this group gets them. */
export interface MessageSource {
  campaignId?: string;
  messageType: (typeof campaigns.$inferSelect)["messageType"];
  content: CampaignContent;
  linkPreview: boolean | null;
  mentionAll: boolean;
}

/** The provider message of `source` to one group: the link preview decision, the mention, the content by type. */
export function providerMessage(
  source: MessageSource,
  target: { channelId: string; groupId: string; deliveryKey: string },
  settings: Settings,
  forwardOf?: OutboundMessage["forwardOf"],
): OutboundMessage {
  const { content } = source;
  const prefs = settings.preferences;
  const preview = prefs.link_preview_mode === "always" || (prefs.link_preview_mode === "ask_always" && source.linkPreview === true);
  const base = {
    ...target,
    campaignId: source.campaignId,
    linkPreview: preview ? { type: prefs.link_preview_type } : (false as const),
    mentionAll: source.mentionAll,
    // A poll is never forwarded: each group gets a poll of its own, whose votes are that group's (docs/decisions.md#polls).
    forwardOf: source.messageType === "poll" ? undefined : forwardOf,
  };
  switch (source.messageType) {
    case "text":
      return { ...base, content: { type: "text", text: content.message } };
    case "carousel":
      return { ...base, content: { type: "carousel", text: content.message, cards: content.cards ?? [] } };
    case "poll":
      return { ...base, content: { type: "poll", poll: content.poll! } };
    default:
      return {
        ...base,
        content: { type: source.messageType, mediaUrl: content.media_url!, caption: content.message, fileName: content.file_name },
      };
  }
}
