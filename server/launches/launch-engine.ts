/**
 * The launch engine's one pass (docs/decisions.md#launches, "Numbers"): for each active launch with
 * auto_create, make the groups `groupsToCreate` asks for (reserve groups once the filling group passes
 * 80 % of capacity − margin; a new filling group when all are full or broken) through its first
 * connected channel. Runs in the background — on `wakeLaunch` and every ~30 s — never inside the
 * public link's request. Engines: inngest/launch-runner.ts (embedded) and inngest/functions/launch-engine.ts.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launchGroups, launches } from "../../db/schema";
import type { MessagingProvider } from "../messaging/provider";
import { createTemplateGroupsLocked, creatingChannel, rateLimitedCreation } from "./add-groups";
import { groupsOfLaunch, type Launch } from "./find-launch";
import { withLaunchLock } from "./launch-lock";
import { groupsToCreate, type RotationGroup } from "./rotation";

/** Launches looked at per pass (oldest first); the next pass takes the rest. */
const batch = 500;

/**
 * A launch without any group is left alone: it was made with `initial_groups: 0` (its groups are to be
 * adopted or asked for with launch-groups), and creating one at once would defeat that.
 */
function needsGroups(launch: Launch, groups: readonly RotationGroup[]) {
  if (groups.length === 0) return 0;
  return groupsToCreate(groups, launch);
}

/**
 * One pass over the active auto_create launches (or just `launchId`). Returns how many groups were
 * created. A channel the platform throttled (a rate-limited creation) makes no other group in the pass.
 */
export async function runLaunchEngine(db: Db, provider: MessagingProvider, now: Date, launchId?: string): Promise<number> {
  const due = await db
    .select()
    .from(launches)
    .where(and(eq(launches.status, "active"), eq(launches.autoCreate, true), launchId ? eq(launches.id, launchId) : undefined))
    .orderBy(asc(launches.createdAt))
    .limit(batch);
  if (due.length === 0) return 0;
  const all = await db
    .select({
      launchId: launchGroups.launchId,
      position: launchGroups.position,
      status: launchGroups.status,
      members: launchGroups.members,
      inviteUrl: launchGroups.inviteUrl,
    })
    .from(launchGroups)
    .where(
      inArray(
        launchGroups.launchId,
        due.map((l) => l.id),
      ),
    );
  let created = 0;
  const throttled = new Set<string>();
  for (const launch of due) {
    if (
      needsGroups(
        launch,
        all.filter((g) => g.launchId === launch.id),
      ) === 0
    )
      continue;
    created += await withLaunchLock(launch.id, async () => {
      // Looked at again under the lock: a request may have added groups meanwhile.
      const n = needsGroups(launch, await groupsOfLaunch(db, launch.id));
      if (n === 0) return 0;
      const channelId = await creatingChannel(db, launch);
      if (channelId && throttled.has(channelId)) return 0;
      try {
        const { created: made, error } = await createTemplateGroupsLocked(db, provider, launch, n, now);
        if (error) console.error(`[launches] launch ${launch.id}: ${made.length} of ${n} groups created`, error);
        if (channelId && rateLimitedCreation(error)) throttled.add(channelId);
        return made.length;
      } catch (err) {
        console.error(`[launches] launch ${launch.id}: no group could be created`, err instanceof Error ? err.message : err);
        if (channelId && rateLimitedCreation(err)) throttled.add(channelId);
        return 0;
      }
    });
  }
  return created;
}
