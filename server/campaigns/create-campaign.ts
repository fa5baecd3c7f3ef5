import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rowsOf } from "../../db/params";
import { campaigns, channels, deliveries, monitoringGroups, segmentChannels, segmentGroups, segments } from "../../db/schema";
import { BadRequest } from "../errors";
import { segmentNotFound } from "../segments/find-segment";
import { newId } from "../ids";
import { eventsRecorded, insertEventSql } from "../outbox/record-event";
import { statusEventSql } from "../dispatch/campaign-events";
import type { CampaignContent } from "../dispatch/campaign-content";
import type { AnyMessageType } from "./schema";
import { parseScheduledAt } from "./scheduled-at";

export interface NewCampaign {
  name: string;
  segmentId: string;
  messageType: AnyMessageType;
  content: CampaignContent;
  linkPreview?: boolean;
  mentionAll: boolean;
  scheduledAt?: string;
}

/**
 * Creates the campaign and one delivery per segment group (plus the monitoring group's copy, not
 * counted in `total`) in one statement: a campaign never exists half fanned out.
 */
export async function createCampaign(db: Db, tenantId: string, input: NewCampaign, now: Date) {
  const scheduledAt = input.scheduledAt ? parseScheduledAt(input.scheduledAt, now) : null;
  // The segment and whether one of its channels is connected, in one query.
  const [segment] = await db
    .select({
      id: segments.id,
      connected: sql<boolean>`exists (select 1 from ${segmentChannels} sc join ${channels} ch on ch.id = sc.channel_id
                                      where sc.segment_id = "segments".id and ch.status = 'connected')`,
    })
    .from(segments)
    .where(and(eq(segments.id, input.segmentId), eq(segments.tenantId, tenantId)));
  if (!segment) throw segmentNotFound(input.segmentId);
  if (!segment.connected) throw new BadRequest(`id_segment: segment ${segment.id} has no connected channel`, "no_connected_channel");

  const id = newId("campaign");
  const nextRunAt = scheduledAt ?? now;
  // One statement (a five-statement transaction before): the campaign, its deliveries and its campaign_status
  // event commit together, and `total` is counted from the very rows the fan-out reads (one snapshot).
  const inserted = db
    .insert(campaigns)
    .values({
      id,
      tenantId,
      segmentId: segment.id,
      name: input.name,
      status: "pending",
      messageType: input.messageType,
      content: input.content,
      linkPreview: input.linkPreview ?? null,
      mentionAll: input.mentionAll,
      scheduledAt,
      // The segment's total_groups at creation.
      total: sql`(select count(*)::int from ${segmentGroups} where ${segmentGroups.segmentId} = ${segment.id})`,
      nextRunAt,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const [{ total }] = rowsOf<{ total: number }>(
    await db.execute(sql`with c as (${inserted.getSQL()}),
      -- Any number of groups in one INSERT (segment groups are unique by their primary key).
      fanned as (
        insert into ${deliveries} (campaign_id, id_group, channel_id, group_name, is_monitoring, position)
        select ${id}, ${segmentGroups.groupId}, ${segmentGroups.channelId}, ${segmentGroups.name}, false, ${segmentGroups.position}
        from ${segmentGroups} where ${segmentGroups.segmentId} = ${segment.id}),
      -- The monitoring group's copy (docs/decisions.md#monitoring-copy): a delivery of its own, first (position -1), but not one
      -- of the campaign's groups, so it is not in total. Skipped if the group is also in the segment (edits keep it out; this is the guard).
      monitoring as (
        insert into ${deliveries} (campaign_id, id_group, channel_id, group_name, is_monitoring, position)
        select ${id}, ${monitoringGroups.groupId}, ${monitoringGroups.channelId}, ${monitoringGroups.name}, true, -1
        from ${monitoringGroups} where ${monitoringGroups.segmentId} = ${segment.id}
          and not exists (select 1 from ${segmentGroups}
                          where ${segmentGroups.segmentId} = ${segment.id} and ${segmentGroups.groupId} = ${monitoringGroups.groupId})),
      event as (${insertEventSql(statusEventSql("c", sql`c`, now, { previous: false }), now)})
      select total from c`),
  );
  eventsRecorded();
  return { id, name: input.name, status: "pending" as const, scheduledAt, nextRunAt, total };
}
