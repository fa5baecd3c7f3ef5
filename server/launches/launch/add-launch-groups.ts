import type { Db } from "../../../db/client";
import type { MessagingProvider } from "../../messaging/provider";
import { adoptExistingGroups, checkAdoptable, createTemplateGroups } from "./add-groups";
import { findLaunch, groupsOfLaunch } from "./find-launch";
import { wakeLaunch } from "./wake";

/**
 * launch-groups (docs/decisions.md#launches): `create` groups from the template now, and/or `adopt`
 * existing ones, appended in that order. Answers all the launch's groups.
 */
export async function addLaunchGroups(
  db: Db,
  provider: MessagingProvider,
  tenantId: string,
  launchId: string,
  input: { create?: number; adopt?: { id_channel: string; groups: string[] } },
  now: Date,
) {
  const launch = await findLaunch(db, tenantId, launchId);
  // Checked before anything is made: a 400 leaves the launch as it was.
  if (input.adopt) await checkAdoptable(provider, launch.channelIds, input.adopt);
  let failed = false;
  if (input.create) failed = (await createTemplateGroups(db, provider, launch, input.create, now)).error !== undefined;
  if (input.adopt && !failed) await adoptExistingGroups(db, provider, launch, input.adopt, now);
  wakeLaunch(launchId);
  return groupsOfLaunch(db, launchId);
}
