CREATE TABLE "purchases" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"platform" text NOT NULL,
	"transaction" text NOT NULL,
	"status" text NOT NULL,
	"phone" text,
	"match_key" text,
	"email" text,
	"name" text,
	"product_id" text,
	"product_name" text,
	"amount" text,
	"currency" text,
	"occurred_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "hooks_token" text DEFAULT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') NOT NULL;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "purchases_notice_idx" ON "purchases" USING btree ("tenant_id","platform","transaction","status");--> statement-breakpoint
CREATE INDEX "purchases_buyer_idx" ON "purchases" USING btree ("tenant_id","match_key");--> statement-breakpoint
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_hooks_token_unique" UNIQUE("hooks_token");