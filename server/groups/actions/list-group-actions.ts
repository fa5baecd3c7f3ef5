import { and, desc, eq, type SQL } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { groupActions } from "../../../db/schema";
import { groupActionView } from "./group-action-view";

/** The tenant's group actions, newest first, optionally of one launch and/or one segment. */
export async function listGroupActions(db: Db, tenantId: string, filter: { launchId?: string; segmentId?: string }) {
  const where: SQL[] = [eq(groupActions.tenantId, tenantId)];
  if (filter.launchId) where.push(eq(groupActions.launchId, filter.launchId));
  if (filter.segmentId) where.push(eq(groupActions.segmentId, filter.segmentId));
  const rows = await db
    .select()
    .from(groupActions)
    .where(and(...where))
    .orderBy(desc(groupActions.createdAt), desc(groupActions.id))
    .limit(500);
  return rows.map(groupActionView);
}
