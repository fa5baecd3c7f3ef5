import { and, asc, eq } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { launchGroups, launches } from "../../db/schema";
import { env } from "../env";
import { NotFound } from "../errors";

export type Launch = typeof launches.$inferSelect;
export type LaunchGroup = typeof launchGroups.$inferSelect;

/** The tenant's launch, or 404 (another tenant's launch is not found either). */
export async function findLaunch(db: Db | Tx, tenantId: string, launchId: string): Promise<Launch> {
  const [row] = await db
    .select()
    .from(launches)
    .where(and(eq(launches.id, launchId), eq(launches.tenantId, tenantId)));
  if (!row) throw new NotFound(`Launch ${launchId} not found.`);
  return row;
}

/** A launch's groups in order (position 1 first). */
export function groupsOfLaunch(db: Db | Tx, launchId: string): Promise<LaunchGroup[]> {
  return db.select().from(launchGroups).where(eq(launchGroups.launchId, launchId)).orderBy(asc(launchGroups.position));
}

/** The public join link of a slug. */
export const joinUrl = (slug: string) => `${env.appUrl}/g/${slug}`;

/** A group in the API's shape. */
export const groupOut = (g: LaunchGroup) => ({
  position: g.position,
  id_group: g.groupId,
  id_channel: g.channelId,
  name: g.name,
  invite_url: g.inviteUrl,
  members: g.members,
  clicks: g.clicks,
  status: g.status,
});
