-- The simulator's state per tenant (docs/decisions.md#limits-abuse-retention, "Simulator"): latency per tenant instead of one global value,
-- injected failures per (channel, group) instead of per group id. Injected failures are transient
-- test state with no channel to attribute them to: they are dropped.
CREATE TABLE "simulator_latency" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"latency_ms" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "simulator_latency" ADD CONSTRAINT "simulator_latency_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
DROP TABLE "simulator_config" CASCADE;--> statement-breakpoint
DELETE FROM "simulator_failures";--> statement-breakpoint
ALTER TABLE "simulator_failures" DROP CONSTRAINT "simulator_failures_pkey";--> statement-breakpoint
ALTER TABLE "simulator_failures" ADD COLUMN "id_channel" text NOT NULL;--> statement-breakpoint
ALTER TABLE "simulator_failures" ADD CONSTRAINT "simulator_failures_id_channel_id_group_pk" PRIMARY KEY("id_channel","id_group");
