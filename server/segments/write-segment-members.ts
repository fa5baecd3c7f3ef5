import { eq } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { segmentChannels, segmentGroups } from "../../db/schema";
import { replaceSegmentReach, type GroupReach } from "./group-reach";
import type { ResolvedGroup } from "./resolve-groups";

const chunk = 1000;

/**
 * Replaces a segment's channels, groups and which channels reach each group (inside the caller's transaction).
 * `monitoring`: the segment's monitoring group and the channels in it, recorded beside the groups' reach.
 */
export async function writeSegmentMembers(tx: Tx, segmentId: string, channelIds: string[], groups: ResolvedGroup[], monitoring?: GroupReach) {
  await tx.delete(segmentChannels).where(eq(segmentChannels.segmentId, segmentId));
  await tx.delete(segmentGroups).where(eq(segmentGroups.segmentId, segmentId));
  await tx.insert(segmentChannels).values(channelIds.map((channelId, position) => ({ segmentId, channelId, position })));
  for (let i = 0; i < groups.length; i += chunk) {
    await tx
      .insert(segmentGroups)
      .values(groups.slice(i, i + chunk).map((g, j) => ({ segmentId, groupId: g.groupId, channelId: g.channelId, name: g.name, position: i + j })));
  }
  await replaceSegmentReach(tx, segmentId, [...groups, ...(monitoring ? [monitoring] : [])]);
}
