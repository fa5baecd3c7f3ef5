import type { campaigns, deliveries } from "../../db/schema";
import type { CampaignContent } from "./campaign-content";
import type { OutboundMessage } from "../messaging/provider";
import type { Settings } from "../settings/schema";
import { encodeDeliveryKey } from "./delivery-key";

/** The provider message for one delivery: content, link preview decision, mention, forwarding. */
export function buildMessage(
  c: typeof campaigns.$inferSelect,
  d: typeof deliveries.$inferSelect,
  settings: Settings,
  forwardOf?: OutboundMessage["forwardOf"],
): OutboundMessage {
  const content = c.content as CampaignContent;
  const prefs = settings.preferences;
  const preview = prefs.link_preview_mode === "always" || (prefs.link_preview_mode === "ask_always" && c.linkPreview === true);
  const base = {
    channelId: d.channelId,
    groupId: d.groupId,
    deliveryKey: encodeDeliveryKey(c.id, d.groupId),
    campaignId: c.id,
    linkPreview: preview ? { type: prefs.link_preview_type } : (false as const),
    mentionAll: c.mentionAll,
    // A poll is never forwarded: each group gets a poll of its own, whose votes are that group's (docs/decisions.md#polls).
    forwardOf: c.messageType === "poll" ? undefined : forwardOf,
  };
  switch (c.messageType) {
    case "text":
      return { ...base, content: { type: "text", text: content.message } };
    case "carousel":
      return { ...base, content: { type: "carousel", text: content.message, cards: content.cards ?? [] } };
    case "poll":
      return { ...base, content: { type: "poll", poll: content.poll! } };
    default:
      return {
        ...base,
        content: { type: c.messageType, mediaUrl: content.media_url!, caption: content.message, fileName: content.file_name },
      };
  }
}
