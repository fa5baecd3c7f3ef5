CREATE INDEX "deliveries_monitoring_idx" ON "deliveries" USING btree ("campaign_id") WHERE is_monitoring;--> statement-breakpoint
-- The monitoring copy is no longer one of the campaign's groups (docs/decisions.md#monitoring-copy):
-- take it out of the counters of campaigns created before, so total/sent/failed count segment groups only.
UPDATE "campaigns" c SET
  "total" = c."total" - 1,
  "sent" = c."sent" - (CASE WHEN m."state" = 'sent' THEN 1 ELSE 0 END),
  "failed" = c."failed" - (CASE WHEN m."state" = 'failed' THEN 1 ELSE 0 END)
FROM "deliveries" m
WHERE m."campaign_id" = c."id" AND m."is_monitoring";
