/**
 * Which of a segment's channels reach each of its groups (CONTRACT §7 "One group, several channels";
 * docs/dispatch.md#several-numbers-per-group): segment_group_channels, one row per (group, channel). The
 * fan-out spreads a campaign's deliveries over these channels and failover moves a delivery to another of
 * them. The segment's monitoring group has its rows here too (its configured channel and the segment's other
 * channels in it), so its copy can go through another number the same way.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { segmentGroupChannels } from "../../db/schema";

export interface GroupReach {
  groupId: string;
  channelIds: string[];
}

/** One JSON parameter for any number of rows (a 10,000-group segment reached by two channels is 20,000 rows). */
async function insertReach(db: Db | Tx, segmentId: string, reach: GroupReach[]) {
  const rows = reach.flatMap((r) => r.channelIds.map((c) => ({ g: r.groupId, c })));
  if (rows.length === 0) return;
  await db.execute(sql`insert into ${segmentGroupChannels} (segment_id, id_group, channel_id)
    select ${segmentId}, r.g, r.c from json_to_recordset(${JSON.stringify(rows)}::json) as r(g text, c text)
    on conflict do nothing`);
}

/**
 * Records that these channels reach the segment's group, adding to what is known (inside the caller's
 * transaction when it passes one). For a group appended to a segment (a launch's new group, reached by the
 * launch's channels that are in it).
 */
export async function addGroupReach(db: Db | Tx, segmentId: string, groupId: string, channelIds: string[]) {
  await insertReach(db, segmentId, [{ groupId, channelIds: [...new Set(channelIds)] }]);
}

/** Replaces the reach rows of one group of the segment (its monitoring group, configured or changed). */
export async function replaceGroupReach(tx: Tx, segmentId: string, reach: GroupReach) {
  await dropGroupReach(tx, segmentId, reach.groupId);
  await insertReach(tx, segmentId, [reach]);
}

/** Forgets one group's reach rows (a monitoring group replaced by another: it is no group of the segment). */
export async function dropGroupReach(tx: Tx, segmentId: string, groupId: string) {
  await tx.delete(segmentGroupChannels).where(and(eq(segmentGroupChannels.segmentId, segmentId), eq(segmentGroupChannels.groupId, groupId)));
}
