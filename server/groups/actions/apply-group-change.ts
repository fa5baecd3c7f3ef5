import type { GroupActionSpec } from "../../../db/schema";
import { participantKey } from "../../phones/phone";
import { forgetGroupAdmins } from "../members/group-admins";
import {
  type GroupChange,
  GroupChangeRefusedError,
  type GroupSettings,
  type MessagingProvider,
  ProviderSendError,
  ProviderUnavailableError,
} from "../../messaging/provider";

/** The change one group gets: the action's, with `{n}` of a subject replaced by the group's number. */
export function changeFor(spec: GroupActionSpec, picture: string | null, position: number): GroupChange {
  switch (spec.type) {
    case "close_messages":
    case "open_messages":
      return { kind: "announce", on: spec.type === "close_messages" };
    case "lock_info":
    case "unlock_info":
      return { kind: "locked", on: spec.type === "lock_info" };
    case "set_subject":
      return { kind: "subject", subject: (spec.subject ?? "").replaceAll("{n}", String(position)) };
    case "set_description":
      return { kind: "description", description: spec.description ?? "" };
    case "set_picture":
      return { kind: "picture", image: picture ?? "", sha256: spec.picture_sha256 ?? "" };
    case "delete_message":
      return { kind: "delete_messages", messages: spec.messages ?? [] };
    default:
      return { kind: "participants", action: spec.type, participants: spec.participants ?? [] };
  }
}

/** Whether a group lists `p` among `ids`: the same id, or the same number (with or without the ninth digit). */
const listed = (ids: string[], p: string) => ids.some((id) => id === p || participantKey(id) === participantKey(p));

/** Whether the group's metadata shows the change (the read-back before `done`). */
export function shows(s: GroupSettings, c: GroupChange): boolean {
  switch (c.kind) {
    case "announce":
      return s.announce === c.on;
    case "locked":
      return s.locked === c.on;
    case "subject":
      return s.subject === c.subject;
    case "description":
      return s.description === c.description;
    case "picture":
      // A platform that does not tell the picture's hash (Evolution: a CDN URL) shows only that the group is there.
      return s.pictureSha256 === undefined || s.pictureSha256 === c.sha256;
    case "participants":
      if (c.action === "promote") return c.participants.every((p) => listed(s.admins, p));
      if (c.action === "demote") return c.participants.every((p) => !listed(s.admins, p));
      return c.participants.every((p) => !listed(s.members, p));
    case "delete_messages":
      // No platform lists deleted messages in a group's metadata: the platform's answer is the only confirmation.
      return true;
  }
}

/**
 * What one application through one channel came to:
 * - `done`: the read-back shows the change;
 * - `failed`: for good (`group_gone`, or the platform's refusal / a change that never shows after the last try);
 * - `not_admin`: this number is not an admin there (another admin number may be);
 * - `unavailable`: this number cannot act now (offline, throttled: `rateLimited`); not counted as a try; `maybeApplied`: the change
 *   may be on the platform (read it back before applying again);
 * - `again`: counted as a try; one more is allowed when the tries are not used up.
 */
export type ApplyOutcome =
  | { kind: "done" }
  | { kind: "failed"; reason: string }
  | { kind: "not_admin" }
  | { kind: "unavailable"; rateLimited: boolean; why: string; maybeApplied: boolean }
  | { kind: "again"; reason: string };

const words = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** Reads the group back: its settings, null when gone, or the reason it could not be read. */
async function readBack(provider: MessagingProvider, channelId: string, groupId: string): Promise<GroupSettings | null | { unreadable: string }> {
  try {
    return await provider.groupSettings(channelId, groupId);
  } catch (err) {
    return { unreadable: words(err) };
  }
}

const isUnreadable = (v: unknown): v is { unreadable: string } => typeof v === "object" && v !== null && "unreadable" in v;

/**
 * Applies `change` to one group through one channel, exactly once: a group whose earlier application's answer was lost
 * (`readFirst`: it was left `applying`) is read back first and not changed again when it shows the change; after an
 * application the group is read back, and only a read-back that shows the change is `done`.
 */
export async function applyGroupChange(
  provider: MessagingProvider,
  channelId: string,
  groupId: string,
  change: GroupChange,
  readFirst: boolean,
): Promise<ApplyOutcome> {
  if (change.kind === "participants" && change.action === "remove") {
    // A removal names only who the group lists now (a launch's remove reaches groups some of them are not in; a
    // platform refuses removing a non-member): read first, and nobody listed is done without a call.
    const before = await readBack(provider, channelId, groupId);
    if (before === null) return { kind: "failed", reason: "group_gone" };
    if (isUnreadable(before))
      return { kind: "unavailable", rateLimited: /rate-?overlimit/i.test(before.unreadable), why: before.unreadable, maybeApplied: readFirst };
    const asked = change.participants;
    const present = before.members.filter((m) => asked.some((p) => listed([m], p)));
    if (present.length === 0) return { kind: "done" };
    change = { ...change, participants: present };
    readFirst = false;
  }
  if (change.kind === "delete_messages") return deleteMessages(provider, channelId, groupId, change);
  if (readFirst) {
    const before = await readBack(provider, channelId, groupId);
    if (before === null) return { kind: "failed", reason: "group_gone" };
    if (isUnreadable(before))
      return { kind: "unavailable", rateLimited: /rate-?overlimit/i.test(before.unreadable), why: before.unreadable, maybeApplied: true };
    if (shows(before, change)) return { kind: "done" };
  }
  try {
    await provider.changeGroup(channelId, groupId, change);
  } catch (err) {
    if (err instanceof GroupChangeRefusedError) return err.refusal === "not_admin" ? { kind: "not_admin" } : { kind: "failed", reason: "group_gone" };
    if (err instanceof ProviderSendError && err.rateLimited) return { kind: "unavailable", rateLimited: true, why: words(err), maybeApplied: readFirst };
    if (err instanceof ProviderUnavailableError) return { kind: "unavailable", rateLimited: false, why: words(err), maybeApplied: readFirst };
    if (err instanceof ProviderSendError) return { kind: "again", reason: `platform_error: ${words(err)}` };
    // The answer was lost (or something else went wrong): the read-back below tells whether it was made.
  } finally {
    // Admins made or unmade (or maybe): moderation reads who is exempt again, whether or not the platform reports it.
    if (change.kind === "participants" && change.action !== "remove") forgetGroupAdmins(groupId);
  }
  const after = await readBack(provider, channelId, groupId);
  if (after === null) return { kind: "failed", reason: "group_gone" };
  // Unread, the group stays being applied: the next look reads it back before anything else.
  if (isUnreadable(after)) return { kind: "unavailable", rateLimited: /rate-?overlimit/i.test(after.unreadable), why: after.unreadable, maybeApplied: true };
  return shows(after, change) ? { kind: "done" } : { kind: "again", reason: "platform_error: the change did not show in the group's metadata" };
}

/**
 * Deletes members' messages for everyone: no read-back exists (a group's metadata lists no messages), so the platform's
 * answer decides, and a lost answer is simply asked again (deleting a deleted message changes nothing).
 */
async function deleteMessages(provider: MessagingProvider, channelId: string, groupId: string, change: GroupChange): Promise<ApplyOutcome> {
  try {
    await provider.changeGroup(channelId, groupId, change);
    return { kind: "done" };
  } catch (err) {
    if (err instanceof GroupChangeRefusedError) return err.refusal === "not_admin" ? { kind: "not_admin" } : { kind: "failed", reason: "group_gone" };
    if (err instanceof ProviderSendError && err.rateLimited) return { kind: "unavailable", rateLimited: true, why: words(err), maybeApplied: false };
    if (err instanceof ProviderUnavailableError) return { kind: "unavailable", rateLimited: false, why: words(err), maybeApplied: false };
    return { kind: "again", reason: `platform_error: ${words(err)}` };
  }
}
