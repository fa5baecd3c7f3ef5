/**
 * Who is an admin of a group, as the platform lists them (moderation exempts them: docs/moderation.md#messages), read
 * through the provider and remembered a while per channel and group. A promotion or demotion — our own group action, or
 * the platform's participant event (Evolution's `group-participants.update` promote/demote, the simulator's) — forgets
 * the group at once, so the next message reads the list again: a member promoted a second ago is exempt.
 */
import type { MessagingProvider } from "../../messaging/provider";
import { participantKey } from "../../phones/phone";
import { processWide } from "../../process-state";

/** Read again after this long. */
const adminsTtlMs = 5 * 60_000;
/** Unreadable now: nobody more is exempt for half a minute (the account's numbers, template admins and staff still are). */
const unreadableTtlMs = 30_000;

/** Per group, per channel: the admins' match keys and until when they hold (one per process: every copy of the code forgets together). */
const cache = () => processWide("groupAdmins", () => new Map<string, Map<string, { keys: Set<string>; until: number }>>());

/** The match keys of the group's admins as `channelId` reads them. */
export async function groupAdmins(provider: Pick<MessagingProvider, "groupSettings">, channelId: string, groupId: string): Promise<Set<string>> {
  const groups = cache();
  let byChannel = groups.get(groupId);
  const known = byChannel?.get(channelId);
  if (known && known.until > Date.now()) return known.keys;
  if (!byChannel) {
    if (groups.size > 10_000) groups.clear();
    byChannel = new Map();
    groups.set(groupId, byChannel);
  }
  // Kept in the map taken before the read: a promotion forgotten meanwhile leaves this (older) answer out of the cache.
  const settings = await provider.groupSettings(channelId, groupId).catch(() => undefined);
  const keys = new Set((settings?.admins ?? []).map((a) => participantKey(a)));
  byChannel.set(channelId, { keys, until: Date.now() + (settings ? adminsTtlMs : unreadableTtlMs) });
  return keys;
}

/** Someone was promoted or demoted in the group: its admins are read again (through every channel) at the next look. */
export function forgetGroupAdmins(groupId: string) {
  cache().delete(groupId);
}
