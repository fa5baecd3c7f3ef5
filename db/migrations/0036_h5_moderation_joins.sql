CREATE TABLE "blocklist_numbers" (
	"tenant_id" text NOT NULL,
	"phone_key" text NOT NULL,
	"phone" text NOT NULL,
	"added_at" timestamp with time zone NOT NULL,
	CONSTRAINT "blocklist_numbers_tenant_id_phone_key_pk" PRIMARY KEY("tenant_id","phone_key")
);
--> statement-breakpoint
CREATE TABLE "moderation_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"launch_id" text NOT NULL,
	"id_group" text NOT NULL,
	"participant" text NOT NULL,
	"rule" text NOT NULL,
	"action" text NOT NULL,
	"excerpt" text DEFAULT '' NOT NULL,
	"dedupe" text NOT NULL,
	"action_id" text,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "moderation" jsonb DEFAULT '{"mode":"off","block_links":true,"allowed_domains":[],"banned_words":[],"max_messages_per_minute":null,"strikes_to_remove":3,"country_codes":null}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "blocklist_numbers" ADD CONSTRAINT "blocklist_numbers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "moderation_events" ADD CONSTRAINT "moderation_events_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "moderation_events" ADD CONSTRAINT "moderation_events_action_id_group_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."group_actions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "moderation_events_dedupe_idx" ON "moderation_events" USING btree ("launch_id","dedupe");--> statement-breakpoint
CREATE INDEX "moderation_events_launch_idx" ON "moderation_events" USING btree ("launch_id","id");