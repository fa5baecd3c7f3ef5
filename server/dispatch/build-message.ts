import type { campaigns, deliveries } from "../../db/schema";
import { type CampaignContent, contentForGroup } from "./campaign-content";
import type { OutboundMessage } from "../messaging/provider";
import type { Settings } from "../settings/schema";
import { encodeDeliveryKey } from "./delivery-key";

/**
 * The provider message for one delivery: content, link preview decision, mention, forwarding. A text with
 * variations is rendered for the group: the variant of its delivery key, its name, and the attempt's time (the
 * claim's, `updatedAt`, which reconciliation reads back unchanged), so a look-up builds the very text that was
 * sent. Such a campaign is never forwarded: each group has its own text.
 */
export function buildMessage(
  c: typeof campaigns.$inferSelect,
  d: typeof deliveries.$inferSelect,
  settings: Settings,
  forwardOf?: OutboundMessage["forwardOf"],
): OutboundMessage {
  const deliveryKey = encodeDeliveryKey(c.id, d.groupId);
  const content = contentForGroup(c.content as CampaignContent, deliveryKey, { groupName: d.groupName, at: d.updatedAt ?? new Date() });
  const prefs = settings.preferences;
  const preview = prefs.link_preview_mode === "always" || (prefs.link_preview_mode === "ask_always" && c.linkPreview === true);
  const base = {
    channelId: d.channelId,
    groupId: d.groupId,
    deliveryKey,
    campaignId: c.id,
    linkPreview: preview ? { type: prefs.link_preview_type } : (false as const),
    mentionAll: c.mentionAll,
    forwardOf: content.variations ? undefined : forwardOf,
  };
  switch (c.messageType) {
    case "text":
      return { ...base, content: { type: "text", text: content.message } };
    case "carousel":
      return { ...base, content: { type: "carousel", text: content.message, cards: content.cards ?? [] } };
    default:
      return {
        ...base,
        content: { type: c.messageType, mediaUrl: content.media_url!, caption: content.message, fileName: content.file_name },
      };
  }
}
