-- phoneKey (server/phones/phone.ts) drops a 9 only before a mobile's subscriber number (starting 6–9): a 13-digit
-- 55 + DDD + 9 + [2-5]xxxxxxx keeps it, so it no longer meets the landline 55 + DDD + [2-5]xxxxxxx. The stored keys are
-- recomputed from the stored phone with phone-sql.ts's expression (a purchase's phone is the checkout's, or the lead's
-- it was matched by: its key always came from it).
UPDATE "launch_leads" SET "match_key" = CASE WHEN "phone" ~ '^55[0-9]{2}9[6-9][0-9]{7}$' THEN substr("phone", 1, 4) || substr("phone", 6) ELSE "phone" END
WHERE "match_key" IS DISTINCT FROM (CASE WHEN "phone" ~ '^55[0-9]{2}9[6-9][0-9]{7}$' THEN substr("phone", 1, 4) || substr("phone", 6) ELSE "phone" END);--> statement-breakpoint
UPDATE "purchases" SET "match_key" = CASE WHEN "phone" ~ '^55[0-9]{2}9[6-9][0-9]{7}$' THEN substr("phone", 1, 4) || substr("phone", 6) ELSE "phone" END
WHERE "phone" IS NOT NULL
  AND "match_key" IS DISTINCT FROM (CASE WHEN "phone" ~ '^55[0-9]{2}9[6-9][0-9]{7}$' THEN substr("phone", 1, 4) || substr("phone", 6) ELSE "phone" END);
