import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type AuditWrite, auditedStatement } from "../audit/audited";
import { launches, segments } from "../../db/schema";
import { BadRequest } from "../errors";
import type { MessagingProvider } from "../messaging/provider";
import { countSegmentGroups, findMonitoringGroup, findSegment, segmentChannelIds, segmentGroupIds } from "./find-segment";
import type { GroupReach } from "./group-reach";
import { resolveGroups } from "./resolve-groups";
import { monitoringChannels } from "./set-monitoring-group";
import { writeSegmentMembers } from "./write-segment-members";

/** Partial edit: lists replace the old ones and every rule of create applies to the result. */
export async function editSegment(
  db: Db,
  provider: MessagingProvider,
  tenantId: string,
  segmentId: string,
  input: { name?: string; id_channel?: string[]; groups?: string[] },
  now: Date,
  audit?: AuditWrite,
) {
  const segment = await findSegment(db, tenantId, segmentId);
  const membersChange = input.id_channel !== undefined || input.groups !== undefined;
  let resolved: Awaited<ReturnType<typeof resolveGroups>> | undefined;
  let monitoringReach: GroupReach | undefined;
  if (membersChange) {
    // A launch's segment holds the launch's groups, no more, no fewer (docs/decisions.md#launches): its groups
    // change through the launch (launch-groups), its name here.
    const [launch] = await db
      .select({ id: launches.id })
      .from(launches)
      .where(and(eq(launches.segmentId, segmentId), eq(launches.tenantId, tenantId)))
      .limit(1);
    if (launch) {
      const field = input.groups !== undefined ? "groups" : "id_channel";
      throw new BadRequest(
        `${field}: this segment holds the groups of launch ${launch.id} and follows them; add groups with POST /api/external/launch-groups/${launch.id} (only name can be edited here).`,
        "launch_segment",
      );
    }
    const channelIds = input.id_channel ?? (await segmentChannelIds(db, segmentId));
    const groupIds = input.groups ?? (await segmentGroupIds(db, segmentId));
    resolved = await resolveGroups(db, provider, tenantId, channelIds, groupIds);
    const monitoring = await findMonitoringGroup(db, segmentId);
    if (monitoring && resolved.groups.some((g) => g.groupId === monitoring.id_group)) {
      throw new BadRequest(`groups: ${monitoring.id_group} is the segment's monitoring group and cannot be one of its groups.`);
    }
    // The monitoring group's reach as listed now: its configured channel and the segment's channels in it.
    if (monitoring)
      monitoringReach = { groupId: monitoring.id_group, channelIds: monitoringChannels(monitoring.id_channel, resolved.reach.get(monitoring.id_group)) };
  }
  const name = input.name ?? segment.name;
  await db.transaction(async (tx) => {
    const rename = tx
      .update(segments)
      .set({ name, updatedAt: now })
      .where(and(eq(segments.id, segmentId), eq(segments.tenantId, tenantId)));
    if (!resolved) return auditedStatement(tx, rename, audit, segmentId);
    await rename;
    await writeSegmentMembers(tx, segmentId, resolved.channelIds, resolved.groups, monitoringReach);
    await audit?.(tx, segmentId);
  });
  return { id: segmentId, name, totalGroups: resolved ? resolved.groups.length : await countSegmentGroups(db, segmentId) };
}
