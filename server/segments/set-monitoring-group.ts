import { and, eq } from "drizzle-orm";
import type { AuditWrite } from "../audit/audited";
import type { Db } from "../../db/client";
import { monitoringGroups, segmentGroups } from "../../db/schema";
import { findChannel } from "../channels/find-channel";
import { queryGroups } from "../channels/list-groups";
import { BadRequest, Conflict, NotFound } from "../errors";
import type { MessagingProvider } from "../messaging/provider";
import { findMonitoringGroup, findSegment, segmentChannelIds } from "./find-segment";
import { isUniqueViolation } from "../../db/errors";
import { dropGroupReach, replaceGroupReach } from "./group-reach";

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

/** The channels that reach the monitoring group: its configured channel first, then the others seen in it. */
export const monitoringChannels = (configured: string, seen: { channelIds: string[] } | undefined) => [
  configured,
  ...(seen?.channelIds ?? []).filter((id) => id !== configured),
];

/**
 * The segment's other channels whose number is in the monitoring group (CONTRACT §7: its copy goes through
 * another of them when the configured one cannot send). A channel whose groups cannot be listed now is left out
 * (the next save of the segment lists it again).
 */
async function monitoringReach(db: Db, provider: MessagingProvider, t: Target) {
  const others = (await segmentChannelIds(db, t.segmentId)).filter((id) => id !== t.channelId);
  const seen: string[] = [];
  for (const id of others) {
    const groups = await queryGroups(provider, id).catch(() => []);
    if (groups.some((g) => g.id_group === t.groupId)) seen.push(id);
  }
  return { groupId: t.groupId, channelIds: monitoringChannels(t.channelId, { channelIds: seen }) };
}

export async function createMonitoringGroup(db: Db, provider: MessagingProvider, t: Target, now: Date, audit?: AuditWrite) {
  const existing = await findSegment(db, t.tenantId, t.segmentId).then(() => findMonitoringGroup(db, t.segmentId));
  if (existing) throw new Conflict(`Segment ${t.segmentId} already has a monitoring group; change it with edit-monitoring/group.`);
  const group = await resolveMonitoringTarget(db, provider, t);
  const reach = await monitoringReach(db, provider, t);
  try {
    await db.transaction(async (tx) => {
      await tx.insert(monitoringGroups).values({
        segmentId: t.segmentId,
        channelId: t.channelId,
        groupId: t.groupId,
        name: group.name,
        createdAt: now,
        updatedAt: now,
      });
      await replaceGroupReach(tx, t.segmentId, reach);
      await audit?.(tx, t.segmentId);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(`Segment ${t.segmentId} already has a monitoring group.`);
    throw err;
  }
  return (await findMonitoringGroup(db, t.segmentId))!;
}

export async function editMonitoringGroup(db: Db, provider: MessagingProvider, t: Target, now: Date, audit?: AuditWrite) {
  await findSegment(db, t.tenantId, t.segmentId);
  const before = await findMonitoringGroup(db, t.segmentId);
  if (!before) {
    throw new NotFound(`Segment ${t.segmentId} has no monitoring group; configure one with POST /api/external/monitoring/group.`);
  }
  const group = await resolveMonitoringTarget(db, provider, t);
  const reach = await monitoringReach(db, provider, t);
  await db.transaction(async (tx) => {
    await tx
      .update(monitoringGroups)
      .set({ channelId: t.channelId, groupId: t.groupId, name: group.name, updatedAt: now })
      .where(eq(monitoringGroups.segmentId, t.segmentId));
    // The former monitoring group is outside the segment (resolveMonitoringTarget's rule): its reach goes with it.
    await dropGroupReach(tx, t.segmentId, before.id_group);
    await replaceGroupReach(tx, t.segmentId, reach);
    await audit?.(tx, t.segmentId);
  });
  return (await findMonitoringGroup(db, t.segmentId))!;
}
