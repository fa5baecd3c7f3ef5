import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";
import { queryGroups } from "../channels/list-groups";
import { BadRequest, NotFound } from "../errors";
import type { MessagingProvider } from "../messaging/provider";

export interface ResolvedGroup {
  groupId: string;
  channelId: string;
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
 * Maps each requested group to the first of the channels that has it (the channel that will send
 * to it). A group none of the channels has is a 400 naming it; a channel that cannot be queried, 503.
 */
export async function resolveGroups(
  db: Db,
  provider: MessagingProvider,
  tenantId: string,
  channelIds: string[],
  groupIds: string[],
): Promise<{ channelIds: string[]; groups: ResolvedGroup[] }> {
  const owned = await requireChannels(db, tenantId, channelIds);
  const wanted = [...new Set(groupIds)];
  // At most SEGMENT_GROUP_LIMIT: the input schema refuses a longer list while parsing (400 naming groups).
  const found = new Map<string, ResolvedGroup>();
  for (const channel of owned) {
    for (const g of await queryGroups(provider, channel.id)) {
      if (!found.has(g.id_group)) found.set(g.id_group, { groupId: g.id_group, channelId: channel.id, name: g.name });
    }
  }
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) {
    const shown = missing.slice(0, 5).join(", ") + (missing.length > 5 ? ` and ${missing.length - 5} more` : "");
    throw new BadRequest(`groups: ${shown} not found in the given channels (id_channel).`);
  }
  return { channelIds: owned.map((c) => c.id), groups: wanted.map((id) => found.get(id)!) };
}
