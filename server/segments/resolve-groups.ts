import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";
import { queryGroups } from "../channels/list-groups";
import { BadRequest, NotFound } from "../errors";
import type { MessagingProvider, ProviderGroup } from "../messaging/provider";

export interface ResolvedGroup {
  groupId: string;
  /** The first of the segment's channels that reaches the group (segment_groups.channel_id). */
  channelId: string;
  /** Every one of the segment's channels that reaches it, in the segment's order (CONTRACT §7 "One group, several channels"). */
  channelIds: string[];
  name: string;
}

/** Checks that the tenant owns every channel: 404 naming the first unknown one. */
export async function requireChannels(db: Db, tenantId: string, channelIds: string[]) {
  const unique = [...new Set(channelIds)];
  const rows = await db
    .select()
    .from(channels)
    .where(and(eq(channels.tenantId, tenantId), inArray(channels.id, unique)));
  const missing = unique.find((id) => !rows.some((r) => r.id === id));
  if (missing) throw new NotFound(`Channel ${missing} not found.`);
  return unique.map((id) => rows.find((r) => r.id === id)!);
}

/**
 * Which of the listed channels reach each group: a channel reaches a group its number is in (the platform lists
 * it among the channel's groups). `listings`: each channel's groups, in the segment's channel order; the first
 * channel listing a group gives its name.
 */
export function groupReach(listings: [channelId: string, groups: ProviderGroup[]][]): Map<string, { name: string; channelIds: string[] }> {
  const reach = new Map<string, { name: string; channelIds: string[] }>();
  for (const [channelId, groups] of listings) {
    for (const g of groups) {
      const known = reach.get(g.id_group);
      if (!known) reach.set(g.id_group, { name: g.name, channelIds: [channelId] });
      else if (!known.channelIds.includes(channelId)) known.channelIds.push(channelId);
    }
  }
  return reach;
}

/**
 * Maps each requested group to every one of the channels that reaches it (the first is the one recorded in
 * segment_groups). A group none of the channels has is a 400 naming it; a channel that cannot be queried, 503.
 * `reach` holds every group any of the channels lists (the monitoring group's reach is read from it too).
 */
export async function resolveGroups(
  db: Db,
  provider: MessagingProvider,
  tenantId: string,
  channelIds: string[],
  groupIds: string[],
): Promise<{ channelIds: string[]; groups: ResolvedGroup[]; reach: ReturnType<typeof groupReach> }> {
  const owned = await requireChannels(db, tenantId, channelIds);
  const wanted = [...new Set(groupIds)];
  // At most SEGMENT_GROUP_LIMIT: the input schema refuses a longer list while parsing (400 naming groups).
  const listings: [string, ProviderGroup[]][] = [];
  for (const channel of owned) listings.push([channel.id, await queryGroups(provider, channel.id)]);
  const reach = groupReach(listings);
  const missing = wanted.filter((id) => !reach.has(id));
  if (missing.length > 0) {
    const shown = missing.slice(0, 5).join(", ") + (missing.length > 5 ? ` and ${missing.length - 5} more` : "");
    throw new BadRequest(`groups: ${shown} not found in the given channels (id_channel).`);
  }
  const groups = wanted.map((id) => {
    const r = reach.get(id)!;
    return { groupId: id, channelId: r.channelIds[0], channelIds: r.channelIds, name: r.name };
  });
  return { channelIds: owned.map((c) => c.id), groups, reach };
}
