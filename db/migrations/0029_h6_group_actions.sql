CREATE TABLE "group_action_groups" (
	"action_id" text NOT NULL,
	"id_group" text NOT NULL,
	"position" integer NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"channel_id" text,
	"reason" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"not_admin" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"waiting_since" timestamp with time zone,
	"at" timestamp with time zone,
	CONSTRAINT "group_action_groups_action_id_id_group_pk" PRIMARY KEY("action_id","id_group")
);
--> statement-breakpoint
CREATE TABLE "group_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text,
	"segment_id" text,
	"launch_id" text,
	"action" jsonb NOT NULL,
	"picture" text,
	"status" text NOT NULL,
	"scheduled_at" timestamp with time zone NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"total" integer DEFAULT 0 NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "simulator_group_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"id_group" text NOT NULL,
	"id_channel" text NOT NULL,
	"change" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "channels" ADD COLUMN "next_group_action_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "simulator_groups" ADD COLUMN "locked" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "simulator_groups" ADD COLUMN "picture_sha256" text;--> statement-breakpoint
ALTER TABLE "group_action_groups" ADD CONSTRAINT "group_action_groups_action_id_group_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."group_actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_actions" ADD CONSTRAINT "group_actions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_actions" ADD CONSTRAINT "group_actions_segment_id_segments_id_fk" FOREIGN KEY ("segment_id") REFERENCES "public"."segments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_actions" ADD CONSTRAINT "group_actions_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "group_action_groups_state_idx" ON "group_action_groups" USING btree ("action_id","state","position");--> statement-breakpoint
CREATE INDEX "group_actions_tenant_idx" ON "group_actions" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "group_actions_due_idx" ON "group_actions" USING btree ("status","next_run_at");--> statement-breakpoint
CREATE INDEX "simulator_group_changes_group_idx" ON "simulator_group_changes" USING btree ("id_group","id");