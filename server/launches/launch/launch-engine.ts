/**
 * The launch engine's one pass (docs/decisions.md#launches, "Numbers"): for each active launch with
 * auto_create, make the groups `groupsToCreate` asks for (reserve groups once the filling group passes
 * 80 % of capacity − margin; a new filling group when all are full or broken) through its channels in turn
 * (docs/launches.md#several-numbers). Runs in the background — on `wakeLaunch` and every ~30 s — never inside
 * the public link's request. A launch whose last creation failed is left alone until its `create_retry_at`,
 * whatever wakes the engine (joins, the link living on the margin): never a loop of creations. Each pass first
 * adds again the launch numbers the platform left out of a group, when their backoff is due (group-joins.ts).
 * Engines (inngest/engines/launches.ts): inngest/in-process/launch-runner.ts (embedded) and inngest/functions/launch-engine.ts.
 */
import { and, asc, eq, inArray, isNull, lte, or } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { launchGroups, launches } from "../../../db/schema";
import type { MessagingProvider } from "../../messaging/provider";
import { createTemplateGroupsLocked } from "./add-groups";
import { groupsOfLaunch, type Launch } from "./find-launch";
import { creationsWait } from "./group-creators";
import { retryGroupJoins } from "./group-joins";
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
 * One pass over the active auto_create launches (or just `launchId`) whose creations are not put off.
 * Returns how many groups were created. A failure puts the launch off (group-creators.ts); a rate-limit
 * answer also keeps the number from creating for an hour, for every launch.
 */
export async function runLaunchEngine(db: Db, provider: MessagingProvider, now: Date, launchId?: string): Promise<number> {
  // Numbers the platform did not put in a launch's group: added again when due (group-joins.ts; backoff, capped).
  await retryGroupJoins(db, provider, now, launchId).catch((err) => console.error("[launches] retrying group joins failed", err));
  const due = await db
    .select()
    .from(launches)
    .where(
      and(
        eq(launches.status, "active"),
        eq(launches.autoCreate, true),
        or(isNull(launches.createRetryAt), lte(launches.createRetryAt, tsParam(now))),
        launchId ? eq(launches.id, launchId) : undefined,
      ),
    )
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
  for (const launch of due) {
    if (
      needsGroups(
        launch,
        all.filter((g) => g.launchId === launch.id),
      ) === 0
    )
      continue;
    created += await withLaunchLock(launch.id, async () => {
      // Looked at again under the lock: a request may have added groups, or a failure put the launch off, meanwhile.
      const [fresh] = await db.select().from(launches).where(eq(launches.id, launch.id));
      if (fresh?.status !== "active" || !fresh.autoCreate || creationsWait(fresh, now)) return 0;
      const n = needsGroups(fresh, await groupsOfLaunch(db, launch.id));
      if (n === 0) return 0;
      try {
        const { created: made, error } = await createTemplateGroupsLocked(db, provider, fresh, n, now);
        if (error) console.error(`[launches] launch ${launch.id}: ${made.length} of ${n} groups created`, error instanceof Error ? error.message : error);
        return made.length;
      } catch (err) {
        console.error(`[launches] launch ${launch.id}: no group could be created`, err instanceof Error ? err.message : err);
        return 0;
      }
    });
  }
  return created;
}
