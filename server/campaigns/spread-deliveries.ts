/**
 * Which channel sends to each group (CONTRACT §7 "Which channel sends"; docs/dispatch.md#several-numbers-per-group):
 * every group gets one of the channels that reach it and can send now, spread evenly. The groups are taken by their
 * *choice set* (the segment's channels that reach the group and can send; when none can, all that reach it), in the
 * database: groupChoicesSql lists each group's set, the fan-out counts the groups per set, spreadQuotas (here, pure,
 * over the handful of sets, never over groups) decides how many of each set go to each channel, and the fan-out's
 * INSERT deals each set's groups to its channels in turn, by position (spreadSlotsSql), one statement.
 *
 * Sets with fewer choices are placed first and their groups go to the least loaded of their choices (ties: the
 * segment's channel order), so where every group is reachable by the same channels the counts differ by at most one,
 * and groups only one number reaches are balanced by the others. A group none of whose channels can send goes to
 * the least loaded of all that reach it (it waits there, and failover moves it once another can send).
 */
import { sql, type SQL } from "drizzle-orm";
import { segmentChannels, segmentGroupChannels, segmentGroups } from "../../db/schema";

/** The groups of one choice set: its channels in the segment's order, and how many groups have exactly these. */
export interface ChoiceSet {
  choices: string[];
  groups: number;
  /** The least position of its groups (sets of as many choices are placed in this order). */
  first: number;
}

/** How many groups of a set (by its `choices`) go to a channel; `order` is the channel's place in the set. */
export interface SpreadQuota {
  s: string[];
  c: string;
  q: number;
  o: number;
}

/** A channel's rank for the choices' order: a channel that reaches a group but is not one of the segment's comes last. */
const big = sql.raw("2147483647");

/**
 * Each group of the segment with its choice set (`choices`, text[] in the segment's order of channels), as a derived
 * table's SELECT (id_group, name, position, choices). `sendable`: a text[] of the segment's channels that can send
 * now. A group without reach rows has its segment_groups.channel_id as its only choice.
 */
export const groupChoicesSql = (segmentId: string, sendable: SQL) => sql`select g.id_group, g.name, g.position,
    coalesce(
      array_agg(r.channel_id order by coalesce(sc.position, ${big}), r.channel_id) filter (where r.channel_id = any(${sendable})),
      array_agg(r.channel_id order by coalesce(sc.position, ${big}), r.channel_id) filter (where r.channel_id is not null),
      array[g.channel_id]) as choices
  from ${segmentGroups} g
    left join ${segmentGroupChannels} r on r.segment_id = g.segment_id and r.id_group = g.id_group
    left join ${segmentChannels} sc on sc.segment_id = g.segment_id and sc.channel_id = r.channel_id
  where g.segment_id = ${segmentId}
  group by g.id_group, g.name, g.position, g.channel_id`;

/** The segment's choice sets with their group counts, as a JSON array of ChoiceSet (null: no groups). */
export const choiceSetsSql = (segmentId: string, sendable: SQL) =>
  sql<ChoiceSet[] | null>`(select json_agg(json_build_object('choices', choices, 'groups', n, 'first', first)) from (
    select choices, count(*)::int as n, min(position) as first from (${groupChoicesSql(segmentId, sendable)}) as gc group by choices) as sets)`;

/**
 * How many groups of each set go to each of its channels: sets with fewer choices first (then by their first
 * group's position), each set's groups to the least loaded of its channels, ties to the earlier in the set's order.
 * Per set, not per group: the load is levelled arithmetically.
 */
export function spreadQuotas(sets: readonly ChoiceSet[]): SpreadQuota[] {
  const load = new Map<string, number>();
  const out: SpreadQuota[] = [];
  const ordered = [...sets].sort((a, b) => a.choices.length - b.choices.length || a.first - b.first);
  for (const set of ordered) {
    const given = new Map(set.choices.map((c) => [c, 0]));
    let left = set.groups;
    while (left > 0) {
      const level = Math.min(...set.choices.map((c) => load.get(c) ?? 0));
      const lowest = set.choices.filter((c) => (load.get(c) ?? 0) === level);
      const above = set.choices.map((c) => load.get(c) ?? 0).filter((l) => l > level);
      const room = above.length ? Math.min(...above) - level : Number.POSITIVE_INFINITY;
      const each = Math.min(room, Math.floor(left / lowest.length));
      // Fewer groups left than the lowest channels: one each, in the set's order.
      const take = each === 0 ? lowest.slice(0, left).map((c) => [c, 1] as const) : lowest.map((c) => [c, each] as const);
      for (const [c, n] of take) {
        load.set(c, (load.get(c) ?? 0) + n);
        given.set(c, (given.get(c) ?? 0) + n);
        left -= n;
      }
    }
    set.choices.forEach((c, o) => {
      const q = given.get(c) ?? 0;
      if (q > 0) out.push({ s: set.choices, c, q, o });
    });
  }
  return out;
}

/**
 * The slots the quotas make, as a derived table's SELECT (s jsonb: the set, c: the channel, rn: the slot's number in
 * its set): each set's channels in turn (a, b, c, a, …), a channel leaving the turn once its quota is dealt. The n-th
 * group of a set (by position) takes the set's n-th slot.
 */
export const spreadSlotsSql = (quotas: SpreadQuota[]) => sql`select q.s, q.c, row_number() over (partition by q.s order by t, q.o) as rn
  from json_to_recordset(${JSON.stringify(quotas)}::json) as q(s jsonb, c text, q int, o int), generate_series(0, q.q - 1) as t`;

/**
 * Whether every group of the segment is reached by every one of its channels (the launch teams' practice: all their
 * numbers admins of every group), as a boolean expression over `segments` (its `id`): then there is one choice set,
 * the segment's sendable channels, and the fan-out deals the groups in turn without counting sets (roundRobinPlanSql).
 * Counted on the reach rows' primary key: groups × channels rows of the segment's groups and channels means none is
 * missing (the monitoring group's rows, kept in the same table, are not counted).
 */
export const everyGroupReachedByAllSql = (segmentId: SQL) => sql<boolean>`(
  (select count(*) from ${segmentGroupChannels} r
    join ${segmentGroups} rsg on rsg.segment_id = r.segment_id and rsg.id_group = r.id_group
    join ${segmentChannels} rsc on rsc.segment_id = r.segment_id and rsc.channel_id = r.channel_id
    where r.segment_id = ${segmentId})
  = (select count(*) from ${segmentGroups} rg where rg.segment_id = ${segmentId}) * (select count(*) from ${segmentChannels} rs where rs.segment_id = ${segmentId}))`;

/**
 * The fan-out's plan when every group has the same choices (`choices`, JSON array of channel ids, in the segment's
 * order): the n-th group by position takes choice (n − 1) mod k. The same deal as spreadQuotas + spreadSlotsSql give one
 * set (equal quotas, the first channels one more), without the per-group aggregation, the slots or their join.
 */
export const roundRobinPlanSql = (segmentId: string, choices: string[]) => sql`select ${segmentGroups.groupId} as id_group, ${segmentGroups.name} as name,
    ${segmentGroups.position} as position,
    ${JSON.stringify(choices)}::jsonb ->> ((row_number() over (order by ${segmentGroups.position}) - 1) % ${choices.length})::int as channel_id
  from ${segmentGroups} where ${segmentGroups.segmentId} = ${segmentId}`;
