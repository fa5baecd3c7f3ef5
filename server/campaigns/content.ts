import type { CarouselCard } from "../messaging/provider";

/** What a campaign sends, as stored in campaigns.content. */
export interface CampaignContent {
  message: string;
  media_url?: string;
  file_name?: string;
  cards?: CarouselCard[];
}
