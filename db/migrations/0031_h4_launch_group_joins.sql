CREATE TABLE "launch_group_joins" (
	"launch_id" text NOT NULL,
	"id_group" text NOT NULL,
	"channel_id" text NOT NULL,
	"reason" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"retry_at" timestamp with time zone,
	"since" timestamp with time zone NOT NULL,
	CONSTRAINT "launch_group_joins_launch_id_id_group_channel_id_pk" PRIMARY KEY("launch_id","id_group","channel_id")
);
--> statement-breakpoint
ALTER TABLE "launch_group_joins" ADD CONSTRAINT "launch_group_joins_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launch_group_joins" ADD CONSTRAINT "launch_group_joins_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "launch_group_joins_retry_idx" ON "launch_group_joins" USING btree ("retry_at");