import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tenants } from "../../db/schema";
import { env } from "../env";
import { acceptsHooks } from "./types";

/** The tenant's part of every inbound webhook URL (tenants.hooks_token). */
export async function tenantHooksToken(db: Db, tenantId: string): Promise<string> {
  const [row] = await db.select({ token: tenants.hooksToken }).from(tenants).where(eq(tenants.id, tenantId));
  return row?.token ?? "";
}

/**
 * The URL to register in the marketplace (docs/integrations.md#inbound-webhooks-buyers); null for a marketplace whose
 * webhook could not be confirmed (its URL answers 501).
 */
export const hookUrl = (type: string, token: string) => (acceptsHooks(type) && token ? `${env.appUrl}/api/hooks/${type}/${token}` : null);
