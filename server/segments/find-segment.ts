import { and, asc, count, eq } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { channels, monitoringGroups, segmentChannels, segmentGroups, segments } from "../../db/schema";
import { NotFound } from "../errors";

/** A segment that does not exist, or is another tenant's (the same answer: no leak of other tenants' ids). */
export const segmentNotFound = (segmentId: string) => new NotFound(`Segment ${segmentId} not found.`);

export async function findSegment(db: Db | Tx, tenantId: string, segmentId: string) {
  const [row] = await db
    .select()
    .from(segments)
    .where(and(eq(segments.id, segmentId), eq(segments.tenantId, tenantId)));
  if (!row) throw segmentNotFound(segmentId);
  return row;
}

export async function segmentChannelIds(db: Db | Tx, segmentId: string) {
  const rows = await db
    .select({ id: segmentChannels.channelId })
    .from(segmentChannels)
    .where(eq(segmentChannels.segmentId, segmentId))
    .orderBy(asc(segmentChannels.position));
  return rows.map((r) => r.id);
}

export async function segmentGroupIds(db: Db | Tx, segmentId: string) {
  const rows = await db
    .select({ id: segmentGroups.groupId })
    .from(segmentGroups)
    .where(eq(segmentGroups.segmentId, segmentId))
    .orderBy(asc(segmentGroups.position));
  return rows.map((r) => r.id);
}

export async function countSegmentGroups(db: Db | Tx, segmentId: string) {
  const [{ value }] = await db.select({ value: count() }).from(segmentGroups).where(eq(segmentGroups.segmentId, segmentId));
  return value;
}

/** The monitoring group in the API's shape, with the channel's current name. */
export async function findMonitoringGroup(db: Db | Tx, segmentId: string) {
  const [row] = await db
    .select({ id_group: monitoringGroups.groupId, name: monitoringGroups.name, id_channel: monitoringGroups.channelId, channel_name: channels.name })
    .from(monitoringGroups)
    .innerJoin(channels, eq(channels.id, monitoringGroups.channelId))
    .where(eq(monitoringGroups.segmentId, segmentId));
  return row ?? null;
}
