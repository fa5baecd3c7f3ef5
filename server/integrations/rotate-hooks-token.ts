import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tenants } from "../../db/schema";
import { hookUrl } from "./hook-url";
import { integrationTypes } from "./types";

/**
 * rotate-hooks-token (docs/integrations.md#inbound-webhooks-buyers): a new token in every inbound webhook URL of the
 * account, made like the column's default (two random UUIDs, PostgreSQL's strong random). The old URLs stop working
 * at once (404): nothing else is looked up by the token. Each marketplace must be given its new URL.
 */
export async function rotateHooksToken(db: Db, tenantId: string) {
  const [row] = await db
    .update(tenants)
    .set({ hooksToken: sql`replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')` })
    .where(eq(tenants.id, tenantId))
    .returning({ token: tenants.hooksToken });
  return {
    success: true as const,
    message: "Webhook URLs rotated: register the new URLs in each marketplace; the old ones answer 404 from now on.",
    webhook_urls: integrationTypes.map((type) => ({ type, webhook_url: hookUrl(type, row?.token ?? "") })),
  };
}
