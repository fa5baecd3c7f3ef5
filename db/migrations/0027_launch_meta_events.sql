CREATE TABLE "meta_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"launch_id" text NOT NULL,
	"event_id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "meta_events_event_id_unique" UNIQUE("event_id")
);
--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "meta_pixel_id" text;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "meta_access_token" text;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "meta_event_name" text;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "meta_test_event_code" text;--> statement-breakpoint
ALTER TABLE "meta_events" ADD CONSTRAINT "meta_events_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "meta_events_due_idx" ON "meta_events" USING btree ("next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "meta_events_launch_idx" ON "meta_events" USING btree ("launch_id","id");--> statement-breakpoint
CREATE INDEX "meta_events_finished_idx" ON "meta_events" USING btree ("finished_at") WHERE finished_at is not null;