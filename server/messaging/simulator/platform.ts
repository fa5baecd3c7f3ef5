import { and, count, eq, isNull } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { simulatorChannels, simulatorGroupCreateLimits, simulatorGroups, simulatorInvites, simulatorParticipants } from "../../../db/schema";
import { type ChannelStatus, type ProviderEvents, ProviderSendError, ProviderUnavailableError } from "../provider";
import { derivedGroup, newInviteCode, simulatedGroups, simulatedOwnNumber } from "./simulated";

export interface SimulatorOptions {
  pairingMs: number;
  groupsPerChannel: number;
  /** The rolling window of `rate_limit_per_minute` (a minute unless a test shortens it: SIMULATOR_RATE_WINDOW_MS). */
  rateWindowMs?: number;
}

/** What every part of the simulator shares: the database, its options and its event bus. */
export interface SimulatorContext {
  db: Db;
  opts: SimulatorOptions;
  events: ProviderEvents;
}

/** The platform's state as every part reads it: a channel's row and status, a group and the number's membership of it. */
export class SimulatedPlatform {
  constructor(private readonly ctx: SimulatorContext) {}

  async channel(channelId: string) {
    const [row] = await this.ctx.db.select().from(simulatorChannels).where(eq(simulatorChannels.channelId, channelId));
    return row;
  }

  async getStatus(channelId: string): Promise<ChannelStatus> {
    const row = await this.channel(channelId);
    if (!row) throw new ProviderUnavailableError(`Channel ${channelId} is unknown to the platform.`);
    if (!row.paired) return "connecting";
    return row.online ? "connected" : "disconnected";
  }

  /** The channel must be paired and online for the number to act on its groups. */
  async requireConnected(channelId: string) {
    const status = await this.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: it cannot manage groups now.`);
  }

  /**
   * The group's row (whichever channel made it: another channel's number may be in it), made on first use
   * for a derived group (`Grupo nn`) of this channel: the channel's number is then its admin member. A group
   * the number left (state `exists: false`) keeps its row without that member. Undefined when there is no
   * such group; whether the channel's number is in it is ownMembership's question.
   */
  async groupRow(channelId: string, groupId: string) {
    const [row] = await this.ctx.db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId));
    if (row) return row;
    const derived = this.derivedGroup(channelId, groupId);
    if (!derived) return undefined;
    // Derived groups sort before created ones (list-groups shows them first anyway).
    const [made] = await this.ctx.db
      .insert(simulatorGroups)
      .values({ groupId, channelId, name: derived.name, createdAt: new Date(0) })
      .onConflictDoNothing()
      .returning();
    if (made) {
      await this.ctx.db
        .insert(simulatorParticipants)
        .values({ groupId, channelId, participant: simulatedOwnNumber(channelId), admin: true, joinedAt: new Date() })
        .onConflictDoNothing();
      return made;
    }
    const [again] = await this.ctx.db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId));
    return again;
  }

  /** The channel's number's membership of the group: absent (the group is gone for it), member or admin. */
  async ownMembership(channelId: string, groupId: string) {
    const [own] = await this.ctx.db
      .select({ admin: simulatorParticipants.admin })
      .from(simulatorParticipants)
      .where(and(eq(simulatorParticipants.groupId, groupId), eq(simulatorParticipants.participant, simulatedOwnNumber(channelId))));
    return own;
  }

  /** The group as the channel's number sees it, or a ProviderSendError (not transient) when it cannot act as its admin. */
  async adminGroup(channelId: string, groupId: string) {
    await this.requireConnected(channelId);
    const row = await this.groupRow(channelId, groupId);
    const own = row && (await this.ownMembership(channelId, groupId));
    if (!row || !own) throw new ProviderSendError(`Group ${groupId} not found for channel ${channelId}.`, false);
    if (!own.admin) throw new ProviderSendError(`The number of channel ${channelId} is not an admin of ${groupId}.`, false);
    return row;
  }

  async size(groupId: string, db: Pick<Db, "select"> = this.ctx.db) {
    const [{ n }] = await db.select({ n: count() }).from(simulatorParticipants).where(eq(simulatorParticipants.groupId, groupId));
    return n;
  }

  /** Revokes the current code (if any) and makes a new one; returns both. */
  async replaceInvite(channelId: string, groupId: string) {
    return this.ctx.db.transaction(async (tx) => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const revoked = await tx
        .update(simulatorInvites)
        .set({ revokedAt: new Date() })
        .where(and(eq(simulatorInvites.groupId, groupId), isNull(simulatorInvites.revokedAt)))
        .returning({ code: simulatorInvites.code });
      const code = newInviteCode();
      await tx.insert(simulatorInvites).values({ code, channelId, groupId });
      return { code, revoked: revoked.map((r) => r.code) };
    });
  }

  /** Control: the channel's group creation limit per rolling hour, or null. */
  async groupCreateLimit(channelId: string): Promise<number | null> {
    const [row] = await this.ctx.db.select().from(simulatorGroupCreateLimits).where(eq(simulatorGroupCreateLimits.channelId, channelId));
    return row?.perHour ?? null;
  }

  /** The groups a channel exposes (the same whatever its state). */
  groupsOf(channelId: string) {
    return simulatedGroups(channelId, this.ctx.opts.groupsPerChannel);
  }

  /** One of the channel's derived groups, or undefined (without building groupsOf's list). */
  derivedGroup(channelId: string, groupId: string) {
    return derivedGroup(channelId, groupId, this.ctx.opts.groupsPerChannel);
  }
}
