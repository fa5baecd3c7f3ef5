ALTER TABLE "channels" ADD COLUMN "slowdown_ms" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "slowdown_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "outcome_unknown_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "lookups" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "evolution_messages" ADD COLUMN "fingerprint" text;--> statement-breakpoint
ALTER TABLE "evolution_messages" ADD COLUMN "id_requested" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "evolution_messages" ADD COLUMN "attempted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "evolution_messages_unsettled_idx" ON "evolution_messages" USING btree ("channel_id","id_group") WHERE message_id is null;