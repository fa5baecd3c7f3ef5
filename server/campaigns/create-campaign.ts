import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { rowsOf } from "../../db/params";
import { campaigns, channels, deliveries, monitoringGroups, segmentChannels, segmentGroupChannels, segmentGroups, segments } from "../../db/schema";
import { tableAs } from "../../db/relation";
import { BadRequest } from "../errors";
import { segmentNotFound } from "../segments/find-segment";
import { newId } from "../ids";
import { eventsRecorded, insertEventSql } from "../outbox/record-event";
import { statusEventSql } from "../dispatch/campaign-events";
import type { CampaignContent } from "../dispatch/campaign-content";
import { sendableChannelSql } from "../numbers/health";
import type { AnyMessageType } from "./schema";
import { parseScheduledAt } from "./scheduled-at";
import { spreadGroups } from "./spread-deliveries";

export interface NewCampaign {
  /** The campaign's id when the caller chose it (a series run records it first); else a new one. */
  id?: string;
  name: string;
  segmentId: string;
  messageType: AnyMessageType;
  content: CampaignContent;
  linkPreview?: boolean;
  mentionAll: boolean;
  scheduledAt?: string;
  /** A run of a series (docs/series.md): its series and the time it was due (its scheduled_at; it starts now). */
  run?: { seriesId: string; at: Date };
}

interface ChannelAbility {
  id: string;
  sendable: boolean;
}

/**
 * Creates the campaign and one delivery per segment group (plus the monitoring group's copy, not
 * counted in `total`) in one statement: a campaign never exists half fanned out. Each delivery gets its
 * channel (CONTRACT §7 "Which channel sends"): one of the segment's channels that reach its group and can
 * send, spread evenly (spreadGroups); the monitoring copy its configured channel, or another in its group
 * when that one cannot send.
 */
export async function createCampaign(db: Db | Tx, tenantId: string, input: NewCampaign, now: Date) {
  const scheduledAt = input.run ? input.run.at : input.scheduledAt ? parseScheduledAt(input.scheduledAt, now) : null;
  // The segment, whether one of its channels is connected, which of its channels can send now, and the
  // monitoring group's channels, in one query.
  const [segment] = await db
    .select({
      id: segments.id,
      connected: sql<boolean>`exists (select 1 from ${segmentChannels} sc join ${channels} ch on ch.id = sc.channel_id
                                      where sc.segment_id = "segments".id and ch.status = 'connected')`,
      channels: sql<
        ChannelAbility[]
      >`(select json_agg(json_build_object('id', sc.channel_id, 'sendable', ${sendableChannelSql(tableAs(channels, "ch"), now)}) order by sc.position)
                                       from ${segmentChannels} sc join ${channels} ch on ch.id = sc.channel_id where sc.segment_id = "segments".id)`,
      monitoring: sql<{ channel: string; reach: ChannelAbility[] | null } | null>`(select json_build_object('channel', mg.channel_id, 'reach',
          (select json_agg(json_build_object('id', r.channel_id, 'sendable', ${sendableChannelSql(tableAs(channels, "rc"), now)}) order by r.channel_id <> mg.channel_id, r.channel_id)
           from ${segmentGroupChannels} r join ${channels} rc on rc.id = r.channel_id where r.segment_id = mg.segment_id and r.id_group = mg.id_group))
        from ${monitoringGroups} mg where mg.segment_id = "segments".id)`,
    })
    .from(segments)
    .where(and(eq(segments.id, input.segmentId), eq(segments.tenantId, tenantId)));
  if (!segment) throw segmentNotFound(input.segmentId);
  if (!segment.connected) throw new BadRequest(`id_segment: segment ${segment.id} has no connected channel`, "no_connected_channel");

  const segmentChannelList = segment.channels ?? [];
  // One channel: every group is its (the statement below reads segment_groups.channel_id); several: spread.
  const spread = segmentChannelList.length > 1 ? await spreadSegment(db, segment.id, segmentChannelList) : null;
  const monitoringChannel = monitoringCopyChannel(segment.monitoring);

  const id = input.id ?? newId("campaign");
  const nextRunAt = scheduledAt && scheduledAt > now ? scheduledAt : now;
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
      channelIds: spread ? spread.channelIds : segmentChannelList.map((c) => c.id).slice(0, 1),
      nextRunAt,
      seriesId: input.run?.seriesId ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  // The groups whose channel is not segment_groups.channel_id (the first that reaches it), as one JSON parameter.
  const moved = spread?.moved ?? [];
  const groupChannel = moved.length ? sql`coalesce(o.c, ${segmentGroups.channelId})` : sql`${segmentGroups.channelId}`;
  const spreadJoin = moved.length
    ? sql`left join json_to_recordset(${JSON.stringify(moved)}::json) as o(g text, c text) on o.g = ${segmentGroups.groupId}`
    : sql``;
  // The inserted campaign row (RETURNING *: the table's columns), which its event reads.
  const created = tableAs(campaigns, "c");
  const [{ total }] = rowsOf<{ total: number }>(
    await db.execute(sql`with ${created.name} as (${inserted.getSQL()}),
      -- Any number of groups in one INSERT (segment groups are unique by their primary key).
      fanned as (
        insert into ${deliveries} (campaign_id, id_group, channel_id, group_name, is_monitoring, position)
        select ${id}, ${segmentGroups.groupId}, ${groupChannel}, ${segmentGroups.name}, false, ${segmentGroups.position}
        from ${segmentGroups} ${spreadJoin} where ${segmentGroups.segmentId} = ${segment.id}),
      -- The monitoring group's copy (docs/decisions.md#monitoring-copy): a delivery of its own, first (position -1), but not one
      -- of the campaign's groups, so it is not in total. Skipped if the group is also in the segment (edits keep it out; this is the guard).
      monitoring as (
        insert into ${deliveries} (campaign_id, id_group, channel_id, group_name, is_monitoring, position)
        select ${id}, ${monitoringGroups.groupId}, coalesce(${monitoringChannel}, ${monitoringGroups.channelId}), ${monitoringGroups.name}, true, -1
        from ${monitoringGroups} where ${monitoringGroups.segmentId} = ${segment.id}
          and not exists (select 1 from ${segmentGroups}
                          where ${segmentGroups.segmentId} = ${segment.id} and ${segmentGroups.groupId} = ${monitoringGroups.groupId})),
      event as (${insertEventSql(statusEventSql(created, created.name, now), now)})
      select total from c`),
  );
  eventsRecorded();
  return { id, name: input.name, status: "pending" as const, scheduledAt, nextRunAt, total };
}

/**
 * A segment of several channels: which channel sends to each group (spreadGroups over the channels that reach
 * it, as segment_group_channels records them; a group without a row keeps segment_groups.channel_id).
 * Returns the groups whose channel differs from segment_groups.channel_id, and every channel used.
 */
async function spreadSegment(db: Db | Tx, segmentId: string, segmentChannelList: ChannelAbility[]) {
  const rows = rowsOf<{ g: string; p: number; first: string; reach: string[] | null }>(
    await db.execute(sql`select sg.id_group as g, sg.position as p, sg.channel_id as first,
        json_agg(r.channel_id) filter (where r.channel_id is not null) as reach
      from ${segmentGroups} sg left join ${segmentGroupChannels} r on r.segment_id = sg.segment_id and r.id_group = sg.id_group
      where sg.segment_id = ${segmentId} group by sg.id_group, sg.position, sg.channel_id`),
  );
  const sendable = new Set(segmentChannelList.filter((c) => c.sendable).map((c) => c.id));
  const chosen = spreadGroups(
    rows.map((r) => ({ groupId: r.g, position: r.p, reach: r.reach?.length ? r.reach : [r.first] })),
    sendable,
    segmentChannelList.map((c) => c.id),
  );
  const first = new Map(rows.map((r) => [r.g, r.first]));
  const moved = [...chosen].filter(([g, c]) => first.get(g) !== c).map(([g, c]) => ({ g, c }));
  // In the segment's order of channels (a group without reach rows may name another: last).
  const used = new Set(chosen.values());
  const ordered = segmentChannelList.map((c) => c.id).filter((id) => used.has(id));
  return { moved, channelIds: [...ordered, ...[...used].filter((id) => !ordered.includes(id))] };
}

/** The monitoring copy's channel: the configured one when it can send, else the first other in its group that can (null: the configured). */
function monitoringCopyChannel(monitoring: { channel: string; reach: ChannelAbility[] | null } | null): string | null {
  if (!monitoring) return null;
  const reach = monitoring.reach ?? [];
  if (reach.length === 0 || reach.some((c) => c.id === monitoring.channel && c.sendable)) return null;
  return reach.find((c) => c.sendable)?.id ?? null;
}
