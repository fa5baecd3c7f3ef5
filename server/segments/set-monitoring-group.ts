import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { monitoringGroups, segmentGroups } from "../../db/schema";
import { findChannel } from "../channels/find-channel";
import { queryGroups } from "../channels/list-groups";
import { BadRequest, Conflict, NotFound } from "../errors";
import type { MessagingProvider } from "../messaging/provider";
import { findMonitoringGroup, findSegment } from "./find-segment";
import { isUniqueViolation } from "../../db/errors";

interface Target {
  tenantId: string;
  segmentId: string;
  channelId: string;
  groupId: string;
}

/** The checks shared by configure and edit (callers have found the segment): the group exists on the channel and is outside the segment. */
async function resolveMonitoringTarget(db: Db, provider: MessagingProvider, t: Target) {
  const channel = await findChannel(db, t.tenantId, t.channelId);
  const group = (await queryGroups(provider, channel.id)).find((g) => g.id_group === t.groupId);
  if (!group) throw new BadRequest(`id_group: ${t.groupId} not found in channel ${t.channelId}.`);
  const [inside] = await db
    .select({ id: segmentGroups.groupId })
    .from(segmentGroups)
    .where(and(eq(segmentGroups.segmentId, t.segmentId), eq(segmentGroups.groupId, t.groupId)));
  if (inside) throw new BadRequest(`id_group: ${t.groupId} is part of the segment; a monitoring group must be outside it.`);
  return group;
}

export async function createMonitoringGroup(db: Db, provider: MessagingProvider, t: Target, now: Date) {
  const existing = await findSegment(db, t.tenantId, t.segmentId).then(() => findMonitoringGroup(db, t.segmentId));
  if (existing) throw new Conflict(`Segment ${t.segmentId} already has a monitoring group; change it with edit-monitoring/group.`);
  const group = await resolveMonitoringTarget(db, provider, t);
  try {
    await db.insert(monitoringGroups).values({
      segmentId: t.segmentId,
      channelId: t.channelId,
      groupId: t.groupId,
      name: group.name,
      createdAt: now,
      updatedAt: now,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(`Segment ${t.segmentId} already has a monitoring group.`);
    throw err;
  }
  return (await findMonitoringGroup(db, t.segmentId))!;
}

export async function editMonitoringGroup(db: Db, provider: MessagingProvider, t: Target, now: Date) {
  await findSegment(db, t.tenantId, t.segmentId);
  if (!(await findMonitoringGroup(db, t.segmentId))) {
    throw new NotFound(`Segment ${t.segmentId} has no monitoring group; configure one with POST /api/external/monitoring/group.`);
  }
  const group = await resolveMonitoringTarget(db, provider, t);
  await db
    .update(monitoringGroups)
    .set({ channelId: t.channelId, groupId: t.groupId, name: group.name, updatedAt: now })
    .where(eq(monitoringGroups.segmentId, t.segmentId));
  return (await findMonitoringGroup(db, t.segmentId))!;
}
