CREATE TABLE "evolution_instances" (
	"channel_id" text PRIMARY KEY NOT NULL,
	"instance_name" text NOT NULL,
	"webhook_token_hash" text NOT NULL,
	"state" text DEFAULT 'connecting' NOT NULL,
	"paired_once" boolean DEFAULT false NOT NULL,
	"qr_code" text,
	"pairing_code" text,
	"pairing_updated_at" timestamp with time zone,
	"groups" jsonb,
	"groups_fetched_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evolution_instances_instance_name_unique" UNIQUE("instance_name")
);
--> statement-breakpoint
CREATE TABLE "evolution_messages" (
	"delivery_key" text NOT NULL,
	"part" integer NOT NULL,
	"channel_id" text NOT NULL,
	"id_group" text NOT NULL,
	"requested_id" text NOT NULL,
	"message_id" text,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evolution_messages_delivery_key_part_pk" PRIMARY KEY("delivery_key","part")
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"tenant_id" text NOT NULL,
	"type" text NOT NULL,
	"label" text NOT NULL,
	"credentials" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "integrations_tenant_id_type_pk" PRIMARY KEY("tenant_id","type")
);
--> statement-breakpoint
ALTER TABLE "evolution_instances" ADD CONSTRAINT "evolution_instances_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrations" ADD CONSTRAINT "integrations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "evolution_messages_message_idx" ON "evolution_messages" USING btree ("message_id");