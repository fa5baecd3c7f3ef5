import { and, asc, count, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { simulatorGroupCreations, simulatorGroups, simulatorInvites, simulatorParticipants } from "../../../db/schema";
import {
  type CreatedGroup,
  type GroupState,
  type NewGroup,
  type ParticipantOutcome,
  type ProviderGroup,
  ProviderSendError,
  ProviderUnavailableError,
} from "../provider";
import type { SimulatedPlatform, SimulatorContext } from "./platform";
import { asPlatformWrites, INVITE_PREFIX, newGroupId, newInviteCode, simulatedOwnNumber, SIMULATOR_GROUP_LIMIT } from "./simulated";

/** The provider's group management (launches; docs/simulator.md#groups-invite-links-and-participants). */
export class SimulatedGroups {
  constructor(
    private readonly ctx: SimulatorContext,
    private readonly platform: SimulatedPlatform,
  ) {}

  async createGroup(channelId: string, group: NewGroup): Promise<CreatedGroup> {
    await this.platform.requireConnected(channelId);
    const name = group.name.trim();
    if (name.length === 0 || name.length > 100) throw new ProviderSendError("A group's name must have 1 to 100 characters.", false);
    if ((group.description ?? "").length > 2048) throw new ProviderSendError("A group's description is limited to 2,048 characters.", false);
    const own = simulatedOwnNumber(channelId);
    // Members as the platform writes them (createJid: a mobile of DDD ≥ 31 loses its ninth digit); the outcomes name the numbers asked for.
    const admins = [...new Set(group.admins.map(asPlatformWrites).filter((a) => a !== own))];
    if (admins.length + 1 > SIMULATOR_GROUP_LIMIT) throw new ProviderSendError(`A group holds at most ${SIMULATOR_GROUP_LIMIT} participants.`, false);
    if (await this.groupCreationThrottled(channelId, name)) {
      throw new ProviderSendError(`rate-overlimit: WhatsApp throttled group creation on channel ${channelId} (no group was made).`, true, {
        rateLimited: true,
      });
    }
    const groupId = newGroupId();
    const joinedAt = new Date();
    await this.ctx.db.transaction(async (tx) => {
      await tx.insert(simulatorGroupCreations).values({ channelId, name, groupId, outcome: "made", at: joinedAt });
      await tx.insert(simulatorGroups).values({
        groupId,
        channelId,
        name,
        description: group.description ?? null,
        pictureUrl: group.pictureUrl ?? null,
        adminsOnly: group.adminsOnly,
        createdAt: joinedAt,
      });
      await tx.insert(simulatorParticipants).values([own, ...admins].map((participant) => ({ groupId, channelId, participant, admin: true, joinedAt })));
    });
    // Every number asked for is made an admin (the simulator refuses no add).
    const participants = group.admins.map((phone): ParticipantOutcome => ({ phone, state: "admin" }));
    return { id_group: groupId, name, adminsOnly: group.adminsOnly, participants };
  }

  /**
   * Past the channel's `group_create_rate_limit_per_hour` (groups made in the rolling hour), WhatsApp answers
   * rate-overlimit and makes nothing: the refusal is logged too (docs/simulator.md).
   */
  async groupCreationThrottled(channelId: string, name: string): Promise<boolean> {
    const limit = await this.platform.groupCreateLimit(channelId);
    if (limit === null) return false;
    const at = new Date();
    const [{ made }] = await this.ctx.db
      .select({ made: count() })
      .from(simulatorGroupCreations)
      .where(
        and(
          eq(simulatorGroupCreations.channelId, channelId),
          eq(simulatorGroupCreations.outcome, "made"),
          gt(simulatorGroupCreations.at, new Date(at.getTime() - 3_600_000)),
        ),
      );
    if (made < limit) return false;
    await this.ctx.db.insert(simulatorGroupCreations).values({ channelId, name, groupId: null, outcome: "rate_limited", at });
    return true;
  }

  /** Promotes to admin, adding first those not in the group (their join is reported, as a gateway does). */
  async promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<ParticipantOutcome[]> {
    const group = await this.platform.adminGroup(channelId, groupId);
    const asked = [...new Set(participants)];
    const wanted = [...new Set(asked.map(asPlatformWrites))];
    if (wanted.length === 0) return [];
    const present = await this.ctx.db
      .select({ participant: simulatorParticipants.participant })
      .from(simulatorParticipants)
      .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, wanted)));
    const added = wanted.filter((p) => !present.some((r) => r.participant === p));
    const joinedAt = new Date();
    if (added.length > 0) {
      await this.ctx.db
        .insert(simulatorParticipants)
        .values(added.map((participant) => ({ groupId, channelId: group.channelId, participant, admin: true, joinedAt })))
        .onConflictDoNothing();
    }
    await this.ctx.db
      .update(simulatorParticipants)
      .set({ admin: true })
      .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, wanted)));
    if (added.length > 0) await this.ctx.events.emit({ type: "group_participants", channelId, groupId, action: "join", participants: added, at: joinedAt });
    await this.ctx.events.emit({ type: "group_admins", channelId, groupId, action: "promote", participants: wanted, at: joinedAt });
    return asked.map((phone) => ({ phone, state: "admin" }));
  }

  /** The current invite code, made on first read (one per group: the group row is locked while it is made). */
  async inviteUrl(channelId: string, groupId: string): Promise<string> {
    await this.platform.adminGroup(channelId, groupId);
    return this.ctx.db.transaction(async (tx) => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const [current] = await tx
        .select({ code: simulatorInvites.code })
        .from(simulatorInvites)
        .where(and(eq(simulatorInvites.groupId, groupId), isNull(simulatorInvites.revokedAt)));
      if (current) return INVITE_PREFIX + current.code;
      const code = newInviteCode();
      await tx.insert(simulatorInvites).values({ code, channelId, groupId });
      return INVITE_PREFIX + code;
    });
  }

  async renewInviteUrl(channelId: string, groupId: string): Promise<string> {
    await this.platform.adminGroup(channelId, groupId);
    return INVITE_PREFIX + (await this.platform.replaceInvite(channelId, groupId)).code;
  }

  async groupState(channelId: string, groupId: string): Promise<GroupState> {
    await this.platform.requireConnected(channelId);
    const row = await this.platform.groupRow(channelId, groupId);
    const own = row && (await this.platform.ownMembership(channelId, groupId));
    if (!row || !own) return { exists: false, admin: false, size: 0 };
    return { exists: true, admin: own.admin, size: await this.platform.size(groupId) };
  }

  /** Known once the channel has paired (a real number is known from the pairing on). */
  async ownNumber(channelId: string): Promise<string | null> {
    const row = await this.platform.channel(channelId);
    return row?.paired ? simulatedOwnNumber(channelId) : null;
  }

  /**
   * The derived groups (`Grupo nn`), then the groups the channel made or whose member its number is (another
   * channel's groups it joined), oldest first; a group the number is no longer in (state `exists: false`, a
   * leave) is not listed.
   */
  async listGroups(channelId: string): Promise<ProviderGroup[]> {
    const status = await this.platform.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: its groups cannot be queried.`);
    const own = simulatedOwnNumber(channelId);
    const rows = await this.ctx.db
      .select({
        groupId: simulatorGroups.groupId,
        name: simulatorGroups.name,
        adminsOnly: simulatorGroups.adminsOnly,
        // Spelled out: drizzle may leave the outer column unqualified, which the subquery would take as its own.
        present: sql<boolean>`exists (select 1 from simulator_participants p where p.id_group = simulator_groups.id_group and p.participant = ${own})`,
      })
      .from(simulatorGroups)
      .where(
        or(
          eq(simulatorGroups.channelId, channelId),
          sql`exists (select 1 from simulator_participants p where p.id_group = simulator_groups.id_group and p.participant = ${own})`,
        ),
      )
      .orderBy(asc(simulatorGroups.createdAt), asc(simulatorGroups.groupId));
    const known = new Map(rows.map((r) => [r.groupId, r]));
    const derived = this.platform.groupsOf(channelId);
    const derivedIds = new Set(derived.map((g) => g.id_group));
    return [
      ...derived.filter((g) => known.get(g.id_group)?.present !== false),
      ...rows.filter((r) => r.present && !derivedIds.has(r.groupId)).map((r) => ({ id_group: r.groupId, name: r.name, adminsOnly: r.adminsOnly })),
    ];
  }
}
