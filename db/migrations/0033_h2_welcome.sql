CREATE TABLE "launch_welcomes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"launch_id" text NOT NULL,
	"id_group" text NOT NULL,
	"participants" jsonb NOT NULL,
	"text" text NOT NULL,
	"mentions" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"channel_id" text,
	"attempt_at" timestamp with time zone,
	"lease_until" timestamp with time zone,
	"lookups" integer DEFAULT 0 NOT NULL,
	"error" text,
	"message_id" text,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "launch_participants" ADD COLUMN "welcome_id" bigint;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "welcome" jsonb;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "welcome_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "simulator_messages" ADD COLUMN "mentions" jsonb;--> statement-breakpoint
ALTER TABLE "launch_welcomes" ADD CONSTRAINT "launch_welcomes_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "launch_welcomes_launch_idx" ON "launch_welcomes" USING btree ("launch_id","state");--> statement-breakpoint
CREATE INDEX "launch_welcomes_due_idx" ON "launch_welcomes" USING btree ("state","lease_until");--> statement-breakpoint
CREATE INDEX "launch_participants_welcome_idx" ON "launch_participants" USING btree ("launch_id","id_group","joined_at") WHERE "launch_participants"."welcome_id" is null and "launch_participants"."staff" = false and "launch_participants"."left_at" is null;