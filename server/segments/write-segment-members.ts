import { eq, sql } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { segmentChannels, segmentGroupChannels, segmentGroups } from "../../db/schema";
import type { GroupReach } from "./group-reach";
import type { ResolvedGroup } from "./resolve-groups";

/**
 * Replaces a segment's channels, groups and which channels reach each group (inside the caller's transaction), one
 * statement per table whatever the number of groups: the groups travel as ONE JSON parameter (`[{g, n, c}]`: id,
 * name, the indexes in `channelIds` of the channels that reach it, the first being segment_groups.channel_id), their
 * position is their place in it. `monitoring`: the segment's monitoring group and the channels in it, recorded
 * beside the groups' reach. `fresh`: a segment just created (nothing to delete first).
 */
export async function writeSegmentMembers(
  tx: Tx,
  segmentId: string,
  channelIds: string[],
  groups: ResolvedGroup[],
  monitoring?: GroupReach,
  options: { fresh?: boolean } = {},
) {
  if (!options.fresh) {
    await tx.delete(segmentChannels).where(eq(segmentChannels.segmentId, segmentId));
    await tx.delete(segmentGroups).where(eq(segmentGroups.segmentId, segmentId));
    await tx.delete(segmentGroupChannels).where(eq(segmentGroupChannels.segmentId, segmentId));
  }
  const index = new Map(channelIds.map((id, i) => [id, i]));
  // A channel that reaches a group but is not listed (none today: resolveGroups reads the listed channels only) is kept by its id.
  const ref = (id: string) => index.get(id) ?? id;
  const rows = JSON.stringify(groups.map((g) => ({ g: g.groupId, n: g.name, c: [g.channelId, ...g.channelIds.filter((c) => c !== g.channelId)].map(ref) })));
  const listed = JSON.stringify(channelIds);
  const channelOf = (item: ReturnType<typeof sql>) =>
    sql`case when json_typeof(${item}) = 'number' then ${listed}::json ->> (${item}::text)::int else ${item} #>> '{}' end`;
  const monitoringRows = JSON.stringify(monitoring ? [...new Set(monitoring.channelIds)].map((c) => ({ g: monitoring.groupId, c })) : []);
  await tx.execute(sql`with input as materialized (
      select e ->> 'g' as g, e ->> 'n' as n, (t.ord - 1)::int as p, e -> 'c' as c from json_array_elements(${rows}::json) with ordinality as t(e, ord)),
    listed as (
      insert into ${segmentChannels} (segment_id, channel_id, position)
      select ${segmentId}, l.id, (l.ord - 1)::int from json_array_elements_text(${listed}::json) with ordinality as l(id, ord)),
    grouped as (
      insert into ${segmentGroups} (segment_id, id_group, channel_id, name, position)
      select ${segmentId}, i.g, ${channelOf(sql`(i.c -> 0)`)}, i.n, i.p from input i)
    insert into ${segmentGroupChannels} (segment_id, id_group, channel_id)
    select ${segmentId}, i.g, ${channelOf(sql`x.value`)} from input i, json_array_elements(i.c) as x
    union all select ${segmentId}, m.g, m.c from json_to_recordset(${monitoringRows}::json) as m(g text, c text)
    on conflict do nothing`);
}
