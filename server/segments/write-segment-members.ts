import { eq } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { segmentChannels, segmentGroups } from "../../db/schema";
import type { ResolvedGroup } from "./resolve-groups";

const chunk = 1000;

/** Replaces a segment's channels and groups (inside the caller's transaction). */
export async function writeSegmentMembers(tx: Tx, segmentId: string, channelIds: string[], groups: ResolvedGroup[]) {
  await tx.delete(segmentChannels).where(eq(segmentChannels.segmentId, segmentId));
  await tx.delete(segmentGroups).where(eq(segmentGroups.segmentId, segmentId));
  await tx.insert(segmentChannels).values(channelIds.map((channelId, position) => ({ segmentId, channelId, position })));
  for (let i = 0; i < groups.length; i += chunk) {
    await tx
      .insert(segmentGroups)
      .values(groups.slice(i, i + chunk).map((g, j) => ({ segmentId, groupId: g.groupId, channelId: g.channelId, name: g.name, position: i + j })));
  }
}
