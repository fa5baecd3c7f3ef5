DROP INDEX "deliveries_campaign_group_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_campaign_group_uq" ON "deliveries" USING btree ("campaign_id","id_group") WHERE state <> 'pending';