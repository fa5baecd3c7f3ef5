CREATE TABLE "group_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"id_group" text NOT NULL,
	"message_id" text NOT NULL,
	"sender" text NOT NULL,
	"person" text NOT NULL,
	"excerpt" text NOT NULL,
	"verdict" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "simulator_group_posts" (
	"message_id" text PRIMARY KEY NOT NULL,
	"id_group" text NOT NULL,
	"sender" text NOT NULL,
	"text" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"deleted_at" timestamp with time zone,
	"deleted_by" text
);
--> statement-breakpoint
ALTER TABLE "moderation_events" ADD COLUMN "reported_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "group_messages_message_uq" ON "group_messages" USING btree ("id_group","message_id");--> statement-breakpoint
CREATE INDEX "group_messages_person_idx" ON "group_messages" USING btree ("id_group","person","at");--> statement-breakpoint
CREATE INDEX "group_messages_at_idx" ON "group_messages" USING btree ("at");--> statement-breakpoint
CREATE INDEX "simulator_group_posts_group_idx" ON "simulator_group_posts" USING btree ("id_group","at");--> statement-breakpoint
CREATE INDEX "moderation_events_unreported_idx" ON "moderation_events" USING btree ("id") WHERE reported_at is null;--> statement-breakpoint
CREATE INDEX "moderation_events_at_idx" ON "moderation_events" USING btree ("at");