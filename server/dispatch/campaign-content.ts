import type { CarouselCard, PollContent } from "../messaging/provider";
import { hasMarkup, renderForGroup, renderNth, type VariationValues } from "./variations";

/**
 * What a campaign sends, as stored in campaigns.content: create-campaign writes it, buildMessage turns
 * it into the provider message of each delivery.
 */
export interface CampaignContent {
  message: string;
  media_url?: string;
  file_name?: string;
  cards?: CarouselCard[];
  /** A poll campaign's poll (`message` holds its question too). */
  poll?: PollContent;
  /**
   * Its texts hold variations (docs/decisions.md#message-variations), validated at create: each group gets its own
   * rendering. Absent on content stored before variations existed, whose texts are sent as written.
   */
  variations?: boolean;
}

/** The content as create-campaign stores it: flagged when a text holds variations markup. */
export function campaignContent(content: Omit<CampaignContent, "variations">): CampaignContent {
  const texts = [content.message, ...(content.cards ?? []).map((c) => c.text)];
  return texts.some(hasMarkup) ? { ...content, variations: true } : { ...content };
}

/** The texts one group gets: the variant its delivery key chooses, its name and the send's time filled in. */
export function contentForGroup(content: CampaignContent, deliveryKey: string, values: VariationValues): CampaignContent {
  return content.variations ? renderTexts(content, (text) => renderForGroup(text, deliveryKey, values)) : content;
}

/** Variant `n` of every text (a test send's previews: one variant after another). */
export function contentVariant(content: CampaignContent, n: number, values: VariationValues): CampaignContent {
  return content.variations ? renderTexts(content, (text) => renderNth(text, n, values)) : content;
}

function renderTexts(content: CampaignContent, render: (text: string) => string): CampaignContent {
  return { ...content, message: render(content.message), cards: content.cards?.map((card) => ({ ...card, text: render(card.text) })) };
}

/** A message's texts as one string: the text, then each card's, a line apart (what the dashboard and send-test show). */
export const contentText = (content: CampaignContent) => [content.message, ...(content.cards ?? []).map((c) => c.text)].filter((t) => t !== "").join("\n");
