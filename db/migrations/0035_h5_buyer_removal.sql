CREATE TABLE "buyer_removals" (
	"launch_id" text NOT NULL,
	"person_key" text NOT NULL,
	"id_group" text NOT NULL,
	"participant" text NOT NULL,
	"transaction" text,
	"platform" text,
	"action_id" text,
	"removed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "buyer_removals_launch_id_person_key_id_group_pk" PRIMARY KEY("launch_id","person_key","id_group")
);
--> statement-breakpoint
ALTER TABLE "group_actions" ADD COLUMN "fixed_groups" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "buyers" jsonb DEFAULT '{"remove_from_groups":false,"dry_run":false}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "buyer_removals" ADD CONSTRAINT "buyer_removals_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "buyer_removals" ADD CONSTRAINT "buyer_removals_action_id_group_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."group_actions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "buyer_removals_action_idx" ON "buyer_removals" USING btree ("action_id","id_group");