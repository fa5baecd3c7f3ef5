import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { simulatorGroupChanges, simulatorGroupPosts, simulatorGroups, simulatorParticipants } from "../../../db/schema";
import { type GroupChange, GroupChangeRefusedError, type GroupSettings, ProviderSendError } from "../provider";
import type { SimulatedPlatform, SimulatorContext } from "./platform";

/** What a change is called in the simulator's change log (GET /api/simulator/groups/{id_group}: `changes`). */
const changeName = (c: GroupChange) =>
  c.kind === "announce"
    ? c.on
      ? "announcement"
      : "not_announcement"
    : c.kind === "locked"
      ? c.on
        ? "locked"
        : "unlocked"
      : c.kind === "participants"
        ? c.action
        : c.kind;

/**
 * A group's settings on the simulated platform (group actions; docs/simulator.md#group-settings): subject, description,
 * picture, announce, locked and admins, changed only by an admin number, each change logged as the system notice it is.
 */
export class SimulatedGroupSettings {
  constructor(
    private readonly ctx: SimulatorContext,
    private readonly platform: SimulatedPlatform,
  ) {}

  /** The group row and the number's membership, or WhatsApp's refusal: item-not-found (gone for it), not-authorized (not an admin). */
  private async asAdmin(channelId: string, groupId: string) {
    await this.platform.requireConnected(channelId);
    const row = await this.platform.groupRow(channelId, groupId);
    const own = row && (await this.platform.ownMembership(channelId, groupId));
    if (!row || !own) throw new GroupChangeRefusedError("group_gone", `item-not-found: group ${groupId} not found for channel ${channelId}`);
    if (!own.admin) throw new GroupChangeRefusedError("not_admin", `not-authorized: the number of channel ${channelId} is not an admin of ${groupId}`);
    return row;
  }

  async changeGroup(channelId: string, groupId: string, change: GroupChange): Promise<void> {
    await this.asAdmin(channelId, groupId);
    if (change.kind === "subject" && (change.subject.trim().length === 0 || change.subject.length > 100)) {
      throw new ProviderSendError("bad-request: a group's subject must have 1 to 100 characters", false);
    }
    if (change.kind === "description" && change.description.length > 2048) throw new ProviderSendError("bad-request: description too long", false);
    const at = new Date();
    if (change.kind === "delete_messages") {
      // Deleted for everyone: the posts stay listed with `deleted` (no settings notice; WhatsApp shows "message deleted").
      const ids = change.messages.map((m) => m.id);
      if (ids.length > 0)
        await this.ctx.db
          .update(simulatorGroupPosts)
          .set({ deletedAt: at, deletedBy: channelId })
          .where(and(eq(simulatorGroupPosts.groupId, groupId), inArray(simulatorGroupPosts.messageId, ids), isNull(simulatorGroupPosts.deletedAt)));
      return;
    }
    await this.ctx.db.transaction(async (tx) => {
      const where = eq(simulatorGroups.groupId, groupId);
      if (change.kind === "announce") await tx.update(simulatorGroups).set({ adminsOnly: change.on }).where(where);
      else if (change.kind === "locked") await tx.update(simulatorGroups).set({ locked: change.on }).where(where);
      else if (change.kind === "subject") await tx.update(simulatorGroups).set({ name: change.subject }).where(where);
      else if (change.kind === "description") await tx.update(simulatorGroups).set({ description: change.description }).where(where);
      else if (change.kind === "picture") await tx.update(simulatorGroups).set({ pictureSha256: change.sha256 }).where(where);
      else {
        const who = and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, change.participants));
        if (change.action === "remove") await tx.delete(simulatorParticipants).where(who);
        else
          await tx
            .update(simulatorParticipants)
            .set({ admin: change.action === "promote" })
            .where(who);
      }
      await tx.insert(simulatorGroupChanges).values({ groupId, channelId, change: changeName(change), at });
    });
    if (change.kind !== "participants") return;
    const { action, participants } = change;
    if (action === "remove") await this.ctx.events.emit({ type: "group_participants", channelId, groupId, action: "leave", participants, at });
    else await this.ctx.events.emit({ type: "group_admins", channelId, groupId, action, participants, at });
  }

  /** The group's metadata as the number sees it (any member may read it), or null when it is gone for it. */
  async groupSettings(channelId: string, groupId: string): Promise<GroupSettings | null> {
    await this.platform.requireConnected(channelId);
    const row = await this.platform.groupRow(channelId, groupId);
    const own = row && (await this.platform.ownMembership(channelId, groupId));
    if (!row || !own) return null;
    return (await this.view(groupId)) ?? null;
  }

  /** The whole state of a group (control: GET /api/simulator/groups/{id_group}), or undefined when there is no such row. */
  async view(groupId: string) {
    const [row] = await this.ctx.db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId));
    if (!row) return undefined;
    const people = await this.ctx.db
      .select({ participant: simulatorParticipants.participant, admin: simulatorParticipants.admin })
      .from(simulatorParticipants)
      .where(eq(simulatorParticipants.groupId, groupId))
      .orderBy(asc(simulatorParticipants.joinedAt), asc(simulatorParticipants.participant));
    return {
      subject: row.name,
      description: row.description ?? "",
      announce: row.adminsOnly,
      locked: row.locked,
      pictureSha256: row.pictureSha256,
      members: people.map((p) => p.participant),
      admins: people.filter((p) => p.admin).map((p) => p.participant),
    } satisfies GroupSettings;
  }

  /** Control: the group's change log, oldest first. */
  async changes(groupId: string) {
    return this.ctx.db
      .select({ channelId: simulatorGroupChanges.channelId, change: simulatorGroupChanges.change, at: simulatorGroupChanges.at })
      .from(simulatorGroupChanges)
      .where(eq(simulatorGroupChanges.groupId, groupId))
      .orderBy(asc(simulatorGroupChanges.id));
  }
}
