CREATE TABLE "channel_lid_phones" (
	"channel_id" text NOT NULL,
	"lid" text NOT NULL,
	"phone" text NOT NULL,
	"learned_at" timestamp with time zone NOT NULL,
	CONSTRAINT "channel_lid_phones_channel_id_lid_pk" PRIMARY KEY("channel_id","lid")
);
--> statement-breakpoint
CREATE TABLE "participant_events_seen" (
	"channel_id" text NOT NULL,
	"event_id" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	CONSTRAINT "participant_events_seen_channel_id_event_id_pk" PRIMARY KEY("channel_id","event_id")
);
--> statement-breakpoint
ALTER TABLE "launch_groups" ADD COLUMN "last_event_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "channel_lid_phones" ADD CONSTRAINT "channel_lid_phones_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "channel_lid_phones_phone_idx" ON "channel_lid_phones" USING btree ("channel_id","phone");--> statement-breakpoint
CREATE INDEX "participant_events_seen_at_idx" ON "participant_events_seen" USING btree ("seen_at");--> statement-breakpoint
CREATE INDEX "launch_participants_person_idx" ON "launch_participants" USING btree ("launch_id","participant");