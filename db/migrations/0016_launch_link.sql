CREATE TABLE "launch_click_day_counts" (
	"launch_id" text NOT NULL,
	"day" text NOT NULL,
	"position" integer,
	"utm_source" text,
	"clicks" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "launch_click_days" (
	"launch_id" text NOT NULL,
	"day" text NOT NULL,
	"clicks" integer NOT NULL,
	"unique_clicks" integer NOT NULL,
	CONSTRAINT "launch_click_days_launch_id_day_pk" PRIMARY KEY("launch_id","day")
);
--> statement-breakpoint
CREATE TABLE "launch_slugs" (
	"slug" text PRIMARY KEY NOT NULL,
	"launch_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "launches" ADD COLUMN "clicks_folded_through" text;--> statement-breakpoint
ALTER TABLE "launch_click_day_counts" ADD CONSTRAINT "launch_click_day_counts_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launch_click_days" ADD CONSTRAINT "launch_click_days_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "launch_slugs" ADD CONSTRAINT "launch_slugs_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "launch_click_day_counts_launch_day_idx" ON "launch_click_day_counts" USING btree ("launch_id","day");--> statement-breakpoint
CREATE INDEX "launch_slugs_launch_idx" ON "launch_slugs" USING btree ("launch_id");--> statement-breakpoint
CREATE INDEX "launch_clicks_at_idx" ON "launch_clicks" USING btree ("at");--> statement-breakpoint
-- Hand-written backfill: every existing launch's current slug becomes its first entry in launch_slugs.
INSERT INTO "launch_slugs" ("slug", "launch_id", "created_at") SELECT "slug", "id", "created_at" FROM "launches" ON CONFLICT ("slug") DO NOTHING;
