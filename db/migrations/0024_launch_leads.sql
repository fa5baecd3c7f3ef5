CREATE TABLE "launch_leads" (
	"launch_id" text NOT NULL,
	"phone" text NOT NULL,
	"match_key" text NOT NULL,
	"name" text,
	"email" text,
	"source" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "launch_leads_launch_id_phone_pk" PRIMARY KEY("launch_id","phone")
);
--> statement-breakpoint
ALTER TABLE "launch_leads" ADD CONSTRAINT "launch_leads_launch_id_launches_id_fk" FOREIGN KEY ("launch_id") REFERENCES "public"."launches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "launch_leads_match_idx" ON "launch_leads" USING btree ("launch_id","match_key");