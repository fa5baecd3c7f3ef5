CREATE TABLE "poll_votes" (
	"campaign_id" text NOT NULL,
	"id_group" text NOT NULL,
	"voter" text NOT NULL,
	"options" jsonb NOT NULL,
	"voted_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "poll_votes_campaign_id_id_group_voter_pk" PRIMARY KEY("campaign_id","id_group","voter")
);
--> statement-breakpoint
ALTER TABLE "simulator_messages" ADD COLUMN "poll" jsonb;