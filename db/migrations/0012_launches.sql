CREATE TABLE "launch_clicks" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"launch_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"day" text NOT NULL,
	"position" integer,
	"utm_source" text,
	"utm_medium" text,
	"utm_campaign" text,
	"visitor" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "launch_groups" (
	"launch_id" text NOT NULL,
	"position" integer NOT NULL,
	"id_group" text NOT NULL,
	"channel_id" text NOT NULL,
	"name" text NOT NULL,
	"invite_url" text,
	"members" integer DEFAULT 0 NOT NULL,
	"clicks" integer DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"adopted" boolean DEFAULT false NOT NULL,
	"broken_reason" text,
	"full_at" timestamp with time zone,
	"invite_checked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "launch_groups_launch_id_position_pk" PRIMARY KEY("launch_id","position")
);
--> statement-breakpoint
CREATE TABLE "launch_participants" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"launch_id" text NOT NULL,
	"id_group" text NOT NULL,
	"participant" text NOT NULL,
	"staff" boolean DEFAULT false NOT NULL,
	"joined_at" timestamp with time zone NOT NULL,
	"left_at" timestamp with time zone,
	"join_reported_at" timestamp with time zone,
	"leave_reported_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "launches" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"slug" text NOT NULL,
	"segment_id" text NOT NULL,
	"channel_ids" jsonb NOT NULL,
	"group_template" jsonb NOT NULL,
	"capacity" integer DEFAULT 1000 NOT NULL,
	"margin" integer DEFAULT 20 NOT NULL,
	"auto_create" boolean DEFAULT true NOT NULL,
	"reserve" integer DEFAULT 1 NOT NULL,
	"staff_numbers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"closed_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "launches_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "simulator_groups" (
	"id_group" text PRIMARY KEY NOT NULL,
	"id_channel" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"picture_url" text,
	"admins_only" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "simulator_invites" (
	"code" text PRIMARY KEY NOT NULL,
	"id_channel" text NOT NULL,
	"id_group" text NOT NULL,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "simulator_participants" (
	"id_group" text NOT NULL,
	"participant" text NOT NULL,
	"id_channel" text NOT NULL,
	"admin" boolean DEFAULT false NOT NULL,
	"joined_at" timestamp with time zone NOT NULL,
	CONSTRAINT "simulator_participants_id_group_participant_pk" PRIMARY KEY("id_group","participant")
);
--> statement-breakpoint
ALTER TABLE "webhook_configs" ADD COLUMN "group_activity_url" text;--> statement-breakpoint
ALTER TABLE "launch_clicks" ADD CONSTRAINT "launch_clicks_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launch_groups" ADD CONSTRAINT "launch_groups_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launch_groups" ADD CONSTRAINT "launch_groups_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launch_participants" ADD CONSTRAINT "launch_participants_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launches" ADD CONSTRAINT "launches_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launches" ADD CONSTRAINT "launches_segment_id_segments_id_fk" FOREIGN KEY ("segment_id") REFERENCES "public"."segments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "launch_clicks_launch_day_idx" ON "launch_clicks" USING btree ("launch_id","day");--> statement-breakpoint
CREATE UNIQUE INDEX "launch_groups_group_uq" ON "launch_groups" USING btree ("launch_id","id_group");--> statement-breakpoint
CREATE INDEX "launch_groups_channel_group_idx" ON "launch_groups" USING btree ("channel_id","id_group");--> statement-breakpoint
CREATE INDEX "launch_participants_group_idx" ON "launch_participants" USING btree ("launch_id","id_group","participant");--> statement-breakpoint
CREATE INDEX "launch_participants_joined_idx" ON "launch_participants" USING btree ("launch_id","joined_at");--> statement-breakpoint
CREATE INDEX "launches_tenant_idx" ON "launches" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "simulator_groups_channel_idx" ON "simulator_groups" USING btree ("id_channel","created_at");--> statement-breakpoint
CREATE INDEX "simulator_invites_group_idx" ON "simulator_invites" USING btree ("id_group");--> statement-breakpoint
CREATE INDEX "simulator_participants_group_idx" ON "simulator_participants" USING btree ("id_group","joined_at");