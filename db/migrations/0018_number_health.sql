CREATE TABLE "segment_group_channels" (
	"segment_id" text NOT NULL,
	"id_group" text NOT NULL,
	"channel_id" text NOT NULL,
	CONSTRAINT "segment_group_channels_segment_id_id_group_channel_id_pk" PRIMARY KEY("segment_id","id_group","channel_id")
);
--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "phone" text;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "first_paired_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "health_state" text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "health_reason" text;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "health_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "health_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "cooling_ms" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "rate_limited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "usage_day" text;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "sent_today" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "groups_created_today" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "next_send_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "limits" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "moved_from" text;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "moved_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "create_retry_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "create_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "segment_group_channels" ADD CONSTRAINT "segment_group_channels_segment_id_segments_id_fk" FOREIGN KEY ("segment_id") REFERENCES "public"."segments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "segment_group_channels" ADD CONSTRAINT "segment_group_channels_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "segment_group_channels_channel_idx" ON "segment_group_channels" USING btree ("channel_id");--> statement-breakpoint
-- Hand-written backfill: every segment group is reached by the channel that sent to it until now.
INSERT INTO "segment_group_channels" ("segment_id", "id_group", "channel_id") SELECT "segment_id", "id_group", "channel_id" FROM "segment_groups" ON CONFLICT DO NOTHING;--> statement-breakpoint
-- A channel paired before the warm-up existed starts its days at its creation.
UPDATE "channels" SET "first_paired_at" = "created_at" WHERE "status" <> 'connecting' AND "first_paired_at" IS NULL;
