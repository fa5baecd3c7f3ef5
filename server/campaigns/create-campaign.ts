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
import {
  choiceSetsSql,
  everyGroupReachedByAllSql,
  groupChoicesSql,
  roundRobinPlanSql,
  spreadQuotas,
  spreadSlotsSql,
  type ChoiceSet,
} from "./spread-deliveries";

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
 * send, spread evenly (spread-deliveries.ts, computed in the database); the monitoring copy its configured channel, or another in its group
 * when that one cannot send.
 */
/** Whether the segment (`segments` in the query) has more than one channel: only then is a spread computed. */
const severalChannels = sql`(select count(*) from ${segmentChannels} sc where sc.segment_id = "segments".id) > 1`;

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
      // Several channels: the segment's groups counted by their choice set (spread-deliveries.ts), for spreadQuotas.
      // Every group reached by every channel (the common case): one set, dealt in turn, nothing to count. One channel:
      // neither is read (counting its groups × reach rows made this read cost half as much as the fan-out itself).
      uniform: sql<boolean | null>`case when ${severalChannels} then ${everyGroupReachedByAllSql(sql`"segments".id`)} end`,
      sets: sql<ChoiceSet[] | null>`case when ${severalChannels} and not ${everyGroupReachedByAllSql(sql`"segments".id`)}
        then ${choiceSetsSql(
          input.segmentId,
          sql`array(select sc.channel_id from ${segmentChannels} sc join ${channels} ch on ch.id = sc.channel_id
          where sc.segment_id = "segments".id and ${sendableChannelSql(tableAs(channels, "ch"), now)})`,
        )} end`,
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
  const monitoringChannel = monitoringCopyChannel(segment.monitoring);
  const id = input.id ?? newId("campaign");
  const nextRunAt = scheduledAt && scheduledAt > now ? scheduledAt : now;
  // The deliveries to write, one per segment group with its channel (`plan`): with one channel, every group is its
  // (segment_groups.channel_id); with several, each choice set's groups are dealt to its channels by the quotas
  // (spread-deliveries.ts), a group whose set changed since the read above taking its first choice.
  const several = segmentChannelList.length > 1;
  const sendableIds = segmentChannelList.filter((c) => c.sendable).map((c) => c.id);
  const sendable = JSON.stringify(sendableIds);
  // Every group reached by all the channels, one of them at least able to send: each group's choices are the sendable ones.
  const roundRobin = several && segment.uniform && sendableIds.length > 0;
  const plan = roundRobin
    ? roundRobinPlanSql(segment.id, sendableIds)
    : several
      ? sql`select gc.id_group, gc.name, gc.position, coalesce(sl.c, gc.choices[1]) as channel_id
        from (select *, row_number() over (partition by choices order by position) as rn
              from (${groupChoicesSql(segment.id, sql`array(select json_array_elements_text(${sendable}::json))`)}) as g) as gc
          left join (${spreadSlotsSql(spreadQuotas(segment.sets ?? []))}) as sl on sl.s = to_jsonb(gc.choices) and sl.rn = gc.rn`
      : sql`select ${segmentGroups.groupId} as id_group, ${segmentGroups.name} as name, ${segmentGroups.position} as position, ${segmentGroups.channelId} as channel_id
        from ${segmentGroups} where ${segmentGroups.segmentId} = ${segment.id}`;
  // One statement (a five-statement transaction before): the campaign, its deliveries and its campaign_status
  // event commit together, and `total` and the counters per channel are counted from the very rows the fan-out writes.
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
      total: sql`(select coalesce(sum(n), 0)::int from per_channel)`,
      // The channels used, in the segment's order (a group's channel that is not one of the segment's: last).
      channelIds: several
        ? sql`(select coalesce(jsonb_agg(u.channel_id order by coalesce(sc.position, 2147483647), u.channel_id), '[]'::jsonb)
            from per_channel as u
              left join ${segmentChannels} sc on sc.segment_id = ${segment.id} and sc.channel_id = u.channel_id)`
        : segmentChannelList.map((c) => c.id).slice(0, 1),
      channelCounts: sql`(select coalesce(jsonb_object_agg(channel_id, jsonb_build_array(n, 0, 0)), '{}'::jsonb) from per_channel)`,
      nextRunAt,
      seriesId: input.run?.seriesId ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  // The inserted campaign row (RETURNING *: the table's columns), which its event reads.
  const created = tableAs(campaigns, "c");
  const [{ total }] = rowsOf<{ total: number }>(
    await db.execute(sql`with plan as materialized (${plan}),
      -- The groups per channel, counted in one pass over the plan: total and the counters per channel both read it.
      per_channel as (select channel_id, count(*)::int as n from plan group by channel_id),
      ${created.name} as (${inserted.getSQL()}),
      -- Any number of groups in one INSERT (segment groups are unique by their primary key).
      fanned as (
        insert into ${deliveries} (campaign_id, id_group, channel_id, group_name, is_monitoring, position)
        select ${id}, id_group, channel_id, name, false, position from plan),
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

/** The monitoring copy's channel: the configured one when it can send, else the first other in its group that can (null: the configured). */
function monitoringCopyChannel(monitoring: { channel: string; reach: ChannelAbility[] | null } | null): string | null {
  if (!monitoring) return null;
  const reach = monitoring.reach ?? [];
  if (reach.length === 0 || reach.some((c) => c.id === monitoring.channel && c.sendable)) return null;
  return reach.find((c) => c.sendable)?.id ?? null;
}
