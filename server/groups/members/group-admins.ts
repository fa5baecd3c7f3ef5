/**
 * Who is an admin of a group, as the platform lists them (moderation exempts them: docs/moderation.md#messages), read
 * through the provider and remembered a while per channel and group. A promotion or demotion — our own group action, or
 * the platform's participant event (Evolution's `group-participants.update` promote/demote, the simulator's) — forgets
 * the group at once, so the next message reads the list again: a member promoted a second ago is exempt.
 */
import type { MessagingProvider } from "../../messaging/provider";
import { participantKey } from "../../phones/phone";
import { ForgettableCache } from "./forgettable-cache";

/** Read again after this long. */
const adminsTtlMs = 5 * 60_000;
/** Unreadable now: nobody more is exempt for half a minute (the account's numbers, template admins and staff still are). */
const unreadableTtlMs = 30_000;

/** Per group, per channel: the admins' match keys, or null when the group could not be read. */
const admins = new ForgettableCache<Set<string> | null>("groupAdmins", 10_000);

/** The match keys of the group's admins as `channelId` reads them. */
export async function groupAdmins(provider: Pick<MessagingProvider, "groupSettings">, channelId: string, groupId: string): Promise<Set<string>> {
  const keys = await admins.get(
    groupId,
    channelId,
    async () => {
      const settings = await provider.groupSettings(channelId, groupId).catch(() => undefined);
      return settings ? new Set(settings.admins.map((a) => participantKey(a))) : null;
    },
    (read) => (read ? adminsTtlMs : unreadableTtlMs),
  );
  return keys ?? new Set();
}

/** Someone was promoted or demoted in the group: its admins are read again (through every channel) at the next look. */
export function forgetGroupAdmins(groupId: string) {
  admins.forget(groupId);
}
