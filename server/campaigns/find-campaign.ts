import { and, eq } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { campaigns } from "../../db/schema";
import { NotFound } from "../errors";

/** What every campaign operation answers for an id the tenant does not have. */
export const campaignNotFound = (campaignId: string) => new NotFound(`Campaign ${campaignId} not found.`);

/** A campaign of this tenant; another tenant's campaign is as unknown as a missing one. */
export async function findCampaign(db: Db | Tx, tenantId: string, campaignId: string) {
  const [row] = await db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.tenantId, tenantId)));
  if (!row) throw campaignNotFound(campaignId);
  return row;
}
