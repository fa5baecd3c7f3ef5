CREATE TABLE "campaign_series" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"segment_id" text NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"message_type" text NOT NULL,
	"content" jsonb NOT NULL,
	"link_preview" boolean,
	"mention_all" boolean DEFAULT false NOT NULL,
	"schedule" jsonb NOT NULL,
	"next_run_at" timestamp with time zone,
	"last_run_at" timestamp with time zone,
	"runs" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "series_runs" (
	"series_id" text NOT NULL,
	"occurrence_at" timestamp with time zone NOT NULL,
	"campaign_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "series_runs_series_id_occurrence_at_pk" PRIMARY KEY("series_id","occurrence_at")
);
--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "series_id" text;--> statement-breakpoint
ALTER TABLE "campaign_series" ADD CONSTRAINT "campaign_series_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_series" ADD CONSTRAINT "campaign_series_segment_id_segments_id_fk" FOREIGN KEY ("segment_id") REFERENCES "public"."segments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "series_runs" ADD CONSTRAINT "series_runs_series_id_campaign_series_id_fk" FOREIGN KEY ("series_id") REFERENCES "public"."campaign_series"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "campaign_series_tenant_idx" ON "campaign_series" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "campaign_series_due_idx" ON "campaign_series" USING btree ("status","next_run_at");--> statement-breakpoint
CREATE INDEX "series_runs_campaign_idx" ON "series_runs" USING btree ("campaign_id");