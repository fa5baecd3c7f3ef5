import { count, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns } from "../../db/schema";

export const partnerPageSize = 20;

/** The partner's campaign list: id, name, status and creation time only; newest first. */
export async function listPartnerCampaigns(db: Db, tenantId: string, page: number) {
  const [{ total }] = await db.select({ total: count() }).from(campaigns).where(eq(campaigns.tenantId, tenantId));
  const rows = await db
    .select({ id: campaigns.id, name: campaigns.name, status: campaigns.status, createdAt: campaigns.createdAt })
    .from(campaigns)
    .where(eq(campaigns.tenantId, tenantId))
    .orderBy(desc(campaigns.createdAt), desc(campaigns.id))
    .limit(partnerPageSize)
    .offset((page - 1) * partnerPageSize);
  return {
    total,
    pages: Math.ceil(total / partnerPageSize),
    campaigns: rows.map((r) => ({ id_campaign: r.id, name: r.name, status: r.status, created_at: r.createdAt.toISOString() })),
  };
}
