CREATE TABLE "moderation_strikes" (
	"launch_id" text NOT NULL,
	"person" text NOT NULL,
	"strikes" integer NOT NULL,
	"last_at" timestamp with time zone NOT NULL,
	CONSTRAINT "moderation_strikes_launch_id_person_pk" PRIMARY KEY("launch_id","person")
);
--> statement-breakpoint
ALTER TABLE "moderation_strikes" ADD CONSTRAINT "moderation_strikes_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "moderation_strikes_last_idx" ON "moderation_strikes" USING btree ("last_at");