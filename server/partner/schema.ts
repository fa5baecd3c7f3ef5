import { z } from "zod";
import { campaignStatus } from "../campaigns/schema";

export const partnerCampaignsInput = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).meta({ description: "Page number, from 1 (20 campaigns a page, newest first)." }),
});

export const partnerCampaignItem = z.object({
  id_campaign: z.string(),
  name: z.string(),
  status: campaignStatus,
  created_at: z.iso.datetime({ offset: true }),
});

export const partnerCampaignsOutput = z.object({
  success: z.literal(true),
  total: z.number().int(),
  page: z.number().int(),
  per_page: z.literal(20),
  pages: z.number().int(),
  campaigns: z.array(partnerCampaignItem),
});

/** 1–365; anything else (missing, out of range, not a number) becomes 30, as the spec says. */
export const periodDays = z
  .preprocess((v) => {
    const n = typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : typeof v === "number" ? v : NaN;
    return Number.isInteger(n) && n >= 1 && n <= 365 ? n : 30;
  }, z.number().int())
  .meta({ description: "Period in days, 1–365 (default 30; a value outside the range becomes 30)." });

export const partnerStatisticsInput = z.object({ days: periodDays.optional() });

export const partnerStatisticsOutput = z.object({
  success: z.literal(true),
  period_days: z.number().int(),
  statistics: z.object({
    campaigns: z.number().int().meta({ description: "Campaigns created in the period." }),
    total_reads: z.number().int().meta({
      description:
        "Read receipts of campaign messages received in the period: only reads the platform reported. On Evolution API group reads are never reported, so this stays 0 there (see info-campaign reads_available).",
    }),
    messages_total: z.number().int().meta({ description: "Deliveries (one per group) of the campaigns created in the period." }),
    messages_sent: z.number().int().meta({ description: "Of those, accepted by the platform." }),
    messages_failed: z.number().int().meta({ description: "Of those, failed after every retry." }),
  }),
});
