ALTER TABLE "simulator_channels" ADD COLUMN "health" text;--> statement-breakpoint
ALTER TABLE "simulator_channels" ADD COLUMN "rate_limit_per_minute" integer;