ALTER TABLE "campaigns" ADD COLUMN "channel_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Hand-written backfill: a campaign's channels are those its segment groups' deliveries are on (one each until issue 24).
UPDATE "campaigns" c SET "channel_ids" = coalesce((SELECT jsonb_agg(DISTINCT d."channel_id") FROM "deliveries" d WHERE d."campaign_id" = c."id" AND NOT d."is_monitoring"), '[]'::jsonb);
