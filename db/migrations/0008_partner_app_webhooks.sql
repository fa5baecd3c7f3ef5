ALTER TABLE "partner_apps" ADD COLUMN "webhook_secret_encrypted" text;--> statement-breakpoint
ALTER TABLE "partner_apps" ADD COLUMN "previous_webhook_secret_encrypted" text;--> statement-breakpoint
ALTER TABLE "partner_apps" ADD COLUMN "previous_webhook_secret_expires_at" timestamp with time zone;