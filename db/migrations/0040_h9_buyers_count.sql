ALTER TABLE "launches" ADD COLUMN "buyers_stamp" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "buyers_counted_key" text;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "buyers_in_groups_count" integer;