import { inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";

/** These campaigns with their tenant, any tenant (the engines' wake-ups); unknown ids are left out. */
export async function campaignTenants(db: Db, campaignIds: string[]): Promise<{ id: string; tenantId: string }[]> {
  if (campaignIds.length === 0) return [];
  return db.select({ id: campaigns.id, tenantId: campaigns.tenantId }).from(campaigns).where(inArray(campaigns.id, campaignIds));
}
