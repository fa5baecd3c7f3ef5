ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_campaign_id_campaigns_id_fk";
--> statement-breakpoint
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_channel_id_channels_id_fk";
--> statement-breakpoint
DROP INDEX "deliveries_claim_idx";--> statement-breakpoint
CREATE INDEX "deliveries_open_idx" ON "deliveries" USING btree ("campaign_id","position") WHERE state in ('pending', 'sending');--> statement-breakpoint
CREATE INDEX "deliveries_in_flight_idx" ON "deliveries" USING btree ("campaign_id","lease_until") WHERE state = 'sending';