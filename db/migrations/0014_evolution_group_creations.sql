CREATE TABLE "evolution_group_creations" (
	"channel_id" text NOT NULL,
	"key" text NOT NULL,
	"subject" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"id_group" text,
	"started_at" timestamp with time zone NOT NULL,
	"settles_at" timestamp with time zone NOT NULL,
	"error" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evolution_group_creations_channel_id_key_pk" PRIMARY KEY("channel_id","key")
);
--> statement-breakpoint
ALTER TABLE "evolution_instances" ADD COLUMN "pairing_requested_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "evolution_instances" ADD COLUMN "own_lid" text;--> statement-breakpoint
ALTER TABLE "evolution_instances" ADD COLUMN "own_lid_phone" text;--> statement-breakpoint
CREATE INDEX "evolution_group_creations_pending_idx" ON "evolution_group_creations" USING btree ("channel_id","subject") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "evolution_group_creations_group_idx" ON "evolution_group_creations" USING btree ("channel_id","id_group");