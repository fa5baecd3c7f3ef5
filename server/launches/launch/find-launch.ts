import { and, asc, eq } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { launchGroupJoins, launchGroups, launches } from "../../../db/schema";
import { env } from "../../env";
import { NotFound } from "../../errors";
import { toBrasiliaIso } from "../../time/brasilia";

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

/** A launch channel left out of one of the launch's groups (launch_group_joins; group-joins.ts). */
export type MissingNumber = typeof launchGroupJoins.$inferSelect;

/** A group in the API's shape; `missing`: the launch's channels the platform has not put in it. */
export const groupOut = (g: LaunchGroup, missing: MissingNumber[] = []) => ({
  position: g.position,
  id_group: g.groupId,
  id_channel: g.channelId,
  name: g.name,
  invite_url: g.inviteUrl,
  members: g.members,
  clicks: g.clicks,
  status: g.status,
  unreached: missing.map((m) => ({
    id_channel: m.channelId,
    reason: m.reason,
    attempts: m.attempts,
    next_attempt_at: m.retryAt ? toBrasiliaIso(m.retryAt) : null,
    since: toBrasiliaIso(m.since),
  })),
});

/** The groups in the API's shape, each with the launch's channels not in it. */
export async function groupsOut(db: Db | Tx, launchId: string, groups: LaunchGroup[]) {
  const rows = groups.length > 0 ? await db.select().from(launchGroupJoins).where(eq(launchGroupJoins.launchId, launchId)) : [];
  return groups.map((g) =>
    groupOut(
      g,
      rows.filter((r) => r.groupId === g.groupId),
    ),
  );
}
