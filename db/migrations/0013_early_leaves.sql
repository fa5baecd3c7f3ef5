CREATE TABLE "launch_early_leaves" (
	"launch_id" text NOT NULL,
	"id_group" text NOT NULL,
	"participant" text NOT NULL,
	"left_at" timestamp with time zone NOT NULL,
	CONSTRAINT "launch_early_leaves_launch_id_id_group_participant_pk" PRIMARY KEY("launch_id","id_group","participant")
);
--> statement-breakpoint
ALTER TABLE "launch_early_leaves" ADD CONSTRAINT "launch_early_leaves_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;