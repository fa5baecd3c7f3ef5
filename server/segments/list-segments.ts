import { asc, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launches, segmentGroups, segments } from "../../db/schema";
import { countSegmentGroups, findMonitoringGroup, findSegment, segmentChannelIds } from "./find-segment";

export async function listSegments(db: Db, tenantId: string) {
  const rows = await db
    .select({ id: segments.id, name: segments.name, createdAt: segments.createdAt, launchId: launches.id })
    .from(segments)
    .leftJoin(launches, eq(launches.segmentId, segments.id))
    .where(eq(segments.tenantId, tenantId))
    .orderBy(desc(segments.createdAt));
  return Promise.all(
    rows.map(async (s) => ({
      id_segment: s.id,
      name: s.name,
      // A launch's segment (it follows the launch's groups): the composer lists these apart.
      id_launch: s.launchId,
      total_groups: await countSegmentGroups(db, s.id),
      monitoring_group: await findMonitoringGroup(db, s.id),
      created_at: s.createdAt.toISOString(),
    })),
  );
}

export async function getSegment(db: Db, tenantId: string, segmentId: string) {
  const s = await findSegment(db, tenantId, segmentId);
  const groups = await db
    .select({ id_group: segmentGroups.groupId, name: segmentGroups.name, id_channel: segmentGroups.channelId })
    .from(segmentGroups)
    .where(eq(segmentGroups.segmentId, segmentId))
    .orderBy(asc(segmentGroups.position));
  return {
    id_segment: s.id,
    name: s.name,
    total_groups: groups.length,
    id_channel: await segmentChannelIds(db, segmentId),
    groups,
    monitoring_group: await findMonitoringGroup(db, segmentId),
    created_at: s.createdAt.toISOString(),
  };
}
