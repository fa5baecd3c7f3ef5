ALTER TABLE "launch_clicks" ADD COLUMN "utm_content" text;--> statement-breakpoint
ALTER TABLE "launch_clicks" ADD COLUMN "utm_term" text;--> statement-breakpoint
ALTER TABLE "launch_clicks" ADD COLUMN "fbclid" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "launch_clicks" ADD COLUMN "gclid" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "alert_minutes" integer DEFAULT 20 NOT NULL;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "alert_min_clicks" integer DEFAULT 30 NOT NULL;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "last_alert_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "last_alert_clicks" integer;