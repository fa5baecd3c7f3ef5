CREATE TABLE "simulator_group_create_limits" (
	"id_channel" text PRIMARY KEY NOT NULL,
	"per_hour" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "simulator_group_creations" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"id_channel" text NOT NULL,
	"name" text NOT NULL,
	"id_group" text,
	"outcome" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "create_channel_id" text;--> statement-breakpoint
CREATE INDEX "simulator_group_creations_channel_idx" ON "simulator_group_creations" USING btree ("id_channel","at");