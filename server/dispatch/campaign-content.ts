import type { CarouselCard, PollContent } from "../messaging/provider";

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
}
