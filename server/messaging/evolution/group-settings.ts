import { type GroupChange, GroupChangeRefusedError, type GroupSettings, ProviderSendError } from "../provider";
import type { Groups } from "./groups";
import { type EvolutionParticipant, participantNumber } from "./jids";

/** The route and body of one change (docs/evolution.md#group-settings-group-actions). */
function call(change: Exclude<GroupChange, { kind: "delete_messages" }>): { action: string; body: unknown } {
  switch (change.kind) {
    case "announce":
      return { action: "updateSetting", body: { action: change.on ? "announcement" : "not_announcement" } };
    case "locked":
      return { action: "updateSetting", body: { action: change.on ? "locked" : "unlocked" } };
    case "subject":
      return { action: "updateGroupSubject", body: { subject: change.subject } };
    case "description":
      return { action: "updateGroupDescription", body: { description: change.description } };
    case "picture":
      return { action: "updateGroupPicture", body: { image: change.image } };
    case "participants":
      return { action: "updateParticipant", body: { action: change.action, participants: change.participants } };
  }
}

/**
 * WhatsApp's refusals as Evolution passes them on (`error.toString()` of Baileys' Boom in the message array):
 * `not-authorized` (and `forbidden`) when the number is not an admin, `item-not-found` when the group is gone.
 */
function refusal(err: unknown, groupId: string): Error {
  const text = err instanceof Error ? err.message : String(err);
  if (err instanceof ProviderSendError && !err.rateLimited) {
    if (/not-authorized|forbidden/i.test(text)) return new GroupChangeRefusedError("not_admin", text);
    if (/item-not-found|not-acceptable|group not found/i.test(text)) return new GroupChangeRefusedError("group_gone", `${groupId}: ${text}`);
  }
  return err instanceof Error ? err : new Error(text);
}

/** Group settings through Evolution API (group actions): the change routes, and the read-back through findGroupInfos. */
export class GroupSettingsCalls {
  constructor(private readonly groups: Groups) {}

  async changeGroup(channelId: string, groupId: string, change: GroupChange): Promise<void> {
    const row = await this.groups.openInstance(channelId);
    if (change.kind === "delete_messages") {
      for (const m of change.messages) await this.groups.deleteForEveryone(channelId, row.instanceName, groupId, m);
      return;
    }
    const { action, body } = call(change);
    let res: { updateParticipants?: { status?: string; jid?: string }[] } | null;
    try {
      // Never repeated on its own: a lost answer is read back by the caller before any second try.
      res = await this.groups.groupCall(channelId, row.instanceName, "POST", action, { groupId, body, retry: false });
    } catch (err) {
      throw refusal(err, groupId);
    }
    // updateParticipant answers 201 with WhatsApp's status per participant: 403 there means not allowed.
    const refused = (res?.updateParticipants ?? []).filter((u) => u.status && u.status !== "200");
    if (refused.some((u) => u.status === "401" || u.status === "403")) {
      throw new GroupChangeRefusedError("not_admin", `not-authorized: ${refused.map((u) => `${u.jid} ${u.status}`).join(", ")}`);
    }
  }

  /** `GET /group/findGroupInfos`: 404 with WhatsApp's not-found words is a gone group; anything else unavailable. */
  async groupSettings(channelId: string, groupId: string): Promise<GroupSettings | null> {
    const row = await this.groups.openInstance(channelId);
    type Info = { subject?: string; desc?: string | null; announce?: boolean; restrict?: boolean; participants?: EvolutionParticipant[] };
    let info: Info | null;
    try {
      info = await this.groups.groupCall<Info | null>(channelId, row.instanceName, "GET", "findGroupInfos", { groupId });
    } catch (err) {
      // findGroup answers 404 "Error fetching group" for any failure: only WhatsApp's not-found words mean gone (as groupState reads them).
      if (err instanceof ProviderSendError && !err.transient && /item-not-found|forbidden|not-authorized|not-acceptable|not a participant/i.test(err.message)) {
        return null;
      }
      throw err;
    }
    if (!info) return null;
    const people = Array.isArray(info.participants) ? info.participants : [];
    const phone = (p: EvolutionParticipant) => participantNumber(p) ?? p.id;
    return {
      subject: info.subject ?? "",
      description: info.desc ?? "",
      announce: Boolean(info.announce),
      locked: Boolean(info.restrict),
      members: people.map(phone),
      admins: people.filter((p) => p.admin === "admin" || p.admin === "superadmin").map(phone),
    };
  }
}
