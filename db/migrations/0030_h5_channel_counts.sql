ALTER TABLE "campaigns" ADD COLUMN "channel_counts" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
-- Backfill: the counters per channel of the campaigns that exist, counted once from their deliveries (the segment's groups only).
UPDATE "campaigns" SET "channel_counts" = x.counts FROM (
  SELECT campaign_id, jsonb_object_agg(channel_id, jsonb_build_array(t, s, f)) AS counts FROM (
    SELECT campaign_id, channel_id, count(*)::int AS t, (count(*) FILTER (WHERE state = 'sent'))::int AS s,
      (count(*) FILTER (WHERE state = 'failed'))::int AS f
    FROM "deliveries" WHERE NOT is_monitoring GROUP BY campaign_id, channel_id) d
  GROUP BY campaign_id) x
WHERE x.campaign_id = "campaigns".id;
