import { randomUUID } from "node:crypto";
import { and, asc, count, desc, eq, gt, inArray, isNull, max, notInArray } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { inJson } from "../../../db/params";
import {
  simulatorChannels,
  simulatorFailures,
  simulatorGroupCreateLimits,
  simulatorGroupCreations,
  simulatorGroupPosts,
  simulatorGroups,
  simulatorInvites,
  simulatorLatency,
  simulatorMessages,
  simulatorParticipants,
} from "../../../db/schema";
import { type NumberLossReason, type PollContent, type PollVote, ProviderEvents } from "../provider";
import { SimulatedPlatform, type SimulatorContext, type SimulatorOptions } from "./platform";
import { asPlatformWrites, INVITE_PREFIX, randomPerson, simulatedOwnNumber, SIMULATOR_GROUP_LIMIT } from "./simulated";
import { isLid } from "../../phones/phone";

/** The outcome of casting votes through the control endpoint: `no_poll` when the campaign sent no poll to that group (of the caller's channels). */
export type PollCastOutcome = { kind: "cast"; options: string[] } | { kind: "no_poll" } | { kind: "unknown_options"; unknown: string[]; options: string[] };

/** The outcome of a join through the control endpoints: `full` when the group is at its limit (nobody joined). */
export type JoinOutcome =
  | { kind: "joined"; channelId: string; groupId: string; joined: string[]; members: number }
  | { kind: "full"; members: number }
  | { kind: "gone" };

/**
 * The control API of the simulated platform (what the /api/simulator routes and the tests call): channels taken
 * offline, banned or rate limited, injected failures and latency, people joining and leaving, the message log.
 * The provider (index.ts) adds the MessagingProvider side on top of it.
 */
export class SimulatorControls {
  protected readonly ctx: SimulatorContext;
  protected readonly platform: SimulatedPlatform;
  /** The platform's event bus (tests emit through it as the platform would). */
  protected readonly events: ProviderEvents;

  constructor(db: Db, opts: SimulatorOptions) {
    this.events = new ProviderEvents("simulator");
    this.ctx = { db, opts, events: this.events };
    this.platform = new SimulatedPlatform(this.ctx);
  }

  /** Control: the channel's group creation limit per rolling hour, or null. */
  groupCreateLimit(channelId: string): Promise<number | null> {
    return this.platform.groupCreateLimit(channelId);
  }

  /** The groups a channel exposes (the same whatever its state). */
  groupsOf(channelId: string) {
    return this.platform.groupsOf(channelId);
  }

  /** One of the channel's derived groups, or undefined (without building groupsOf's list). */
  derivedGroup(channelId: string, groupId: string) {
    return this.platform.derivedGroup(channelId, groupId);
  }

  /** Control: sets the channel's group creation limit per rolling hour (null: none). */
  async setGroupCreateLimit(channelId: string, perHour: number | null) {
    if (perHour === null) await this.ctx.db.delete(simulatorGroupCreateLimits).where(eq(simulatorGroupCreateLimits.channelId, channelId));
    else
      await this.ctx.db
        .insert(simulatorGroupCreateLimits)
        .values({ channelId, perHour })
        .onConflictDoUpdate({ target: simulatorGroupCreateLimits.channelId, set: { perHour } });
  }

  /** Inspection: the group creations asked of these channels, oldest first. */
  async groupCreations(channelIds: string[]) {
    if (channelIds.length === 0) return [];
    return this.ctx.db
      .select()
      .from(simulatorGroupCreations)
      .where(inArray(simulatorGroupCreations.channelId, channelIds))
      .orderBy(asc(simulatorGroupCreations.id));
  }

  /** Control: which of these channels has the group (a derived one or one it made), or undefined. */
  async channelOfGroup(channelIds: string[], groupId: string): Promise<string | undefined> {
    if (channelIds.length === 0) return undefined;
    const [made] = await this.ctx.db
      .select({ channelId: simulatorGroups.channelId })
      .from(simulatorGroups)
      .where(and(eq(simulatorGroups.groupId, groupId), inArray(simulatorGroups.channelId, channelIds)));
    return made?.channelId ?? channelIds.find((id) => this.platform.derivedGroup(id, groupId) !== undefined);
  }

  /** Control: the group the invite code opens, while the code is current and the group exists for its number. */
  async inviteTarget(code: string) {
    const [invite] = await this.ctx.db
      .select({ channelId: simulatorInvites.channelId, groupId: simulatorInvites.groupId })
      .from(simulatorInvites)
      .where(and(eq(simulatorInvites.code, code), isNull(simulatorInvites.revokedAt)));
    if (!invite || !(await this.platform.ownMembership(invite.channelId, invite.groupId))) return undefined;
    return invite;
  }

  /**
   * Control: people join (the given numbers or ids, or `count` random numbers), all or none: `full` when
   * the group would pass 1024. Those already in the group are skipped. Emits one `group_participants`
   * join event (awaited: the listeners have run when this returns).
   */
  async joinParticipants(channelId: string, groupId: string, who: string[] | number): Promise<JoinOutcome> {
    const row = await this.platform.groupRow(channelId, groupId);
    if (!row || !(await this.platform.ownMembership(channelId, groupId))) return { kind: "gone" };
    let at = new Date();
    const outcome = await this.ctx.db.transaction(async (tx): Promise<JoinOutcome> => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const [{ members, latest }] = await tx
        .select({ members: count(), latest: max(simulatorParticipants.joinedAt) })
        .from(simulatorParticipants)
        .where(eq(simulatorParticipants.groupId, groupId));
      // Strictly after everyone already in: "the N most recent" is then an order of joins, not of clock ticks.
      if (latest && latest.getTime() >= at.getTime()) at = new Date(latest.getTime() + 1);
      let joined: string[];
      if (typeof who === "number") {
        joined = await this.newPeople(tx, groupId, who);
      } else {
        // Numbers as the platform writes them (a mobile of DDD ≥ 31 without its ninth digit), whatever form was asked.
        const wanted = [...new Set(who.map(asPlatformWrites))];
        const present = wanted.length
          ? await tx
              .select({ participant: simulatorParticipants.participant })
              .from(simulatorParticipants)
              .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, wanted)))
          : [];
        joined = wanted.filter((p) => !present.some((r) => r.participant === p));
      }
      if (members + joined.length > SIMULATOR_GROUP_LIMIT) return { kind: "full", members };
      if (joined.length === 0) return { kind: "joined", channelId, groupId, joined, members };
      const inserted = await tx
        .insert(simulatorParticipants)
        .values(joined.map((participant) => ({ groupId, channelId, participant, admin: false, joinedAt: at })))
        .onConflictDoNothing()
        .returning({ participant: simulatorParticipants.participant });
      joined = inserted.map((r) => r.participant);
      return { kind: "joined", channelId, groupId, joined, members: members + joined.length };
    });
    if (outcome.kind === "joined" && outcome.joined.length > 0) {
      await this.events.emit({ type: "group_participants", channelId, groupId, action: "join", participants: outcome.joined, at });
    }
    return outcome;
  }

  /**
   * Control: a member posts a text in the group (docs/simulator.md#members-post); `phone`: a LID sender's number, carried
   * beside it (Evolution's `participantAlt`). `idMessage` given and already posted: the platform delivers that message
   * again (nothing new is posted). The service receives it as from the platform, recorded (emitRecorded): answers
   * `not_member` when the sender is not in the group, and throws when the service could not record it (the control then
   * answers 5xx, as a gateway's webhook would be).
   */
  async postMessage(
    channelId: string,
    groupId: string,
    from: string,
    text: string,
    idMessage?: string,
    phone?: string,
  ): Promise<{ kind: "posted"; idMessage: string } | { kind: "not_member" }> {
    const sender = asPlatformWrites(from);
    const [member] = await this.ctx.db
      .select({ participant: simulatorParticipants.participant })
      .from(simulatorParticipants)
      .where(and(eq(simulatorParticipants.groupId, groupId), eq(simulatorParticipants.participant, sender)));
    if (!member) return { kind: "not_member" };
    const messageId = idMessage ?? `SIMG${randomUUID().replaceAll("-", "").slice(0, 16).toUpperCase()}`;
    const [row] = await this.ctx.db
      .insert(simulatorGroupPosts)
      .values({ messageId, groupId, sender, text, at: new Date() })
      .onConflictDoUpdate({ target: simulatorGroupPosts.messageId, set: { messageId } })
      .returning();
    if (row.groupId !== groupId) return { kind: "not_member" };
    // A LID sent with its number beside it: the pairing goes along (the sender stays as the group lists them).
    const pairs = isLid(row.sender) && phone ? [{ lid: row.sender, phone: asPlatformWrites(phone) }] : undefined;
    await this.events.emitRecorded({
      type: "group_message",
      channelId,
      groupId,
      messageId,
      sender: row.sender,
      ...(pairs ? { pairs } : {}),
      text: row.text,
      at: row.at,
    });
    return { kind: "posted", idMessage: messageId };
  }

  /** Inspection: the messages members posted in the group, oldest first. */
  async groupPosts(groupId: string) {
    return this.ctx.db.select().from(simulatorGroupPosts).where(eq(simulatorGroupPosts.groupId, groupId)).orderBy(asc(simulatorGroupPosts.at));
  }

  /** `n` random people, distinct from each other and from everyone already in the group (a collision draws again). */
  private async newPeople(tx: Pick<Db, "select">, groupId: string, n: number): Promise<string[]> {
    const people = new Set<string>();
    while (people.size < n) {
      const draw = new Set<string>();
      while (draw.size < n - people.size) {
        const p = randomPerson();
        if (!people.has(p)) draw.add(p);
      }
      const present = await tx
        .select({ participant: simulatorParticipants.participant })
        .from(simulatorParticipants)
        .where(and(eq(simulatorParticipants.groupId, groupId), inJson(simulatorParticipants.participant, [...draw])));
      const taken = new Set(present.map((r) => r.participant));
      for (const p of draw) if (!taken.has(p)) people.add(p);
    }
    return [...people];
  }

  /**
   * Control: people leave — the `count` most recent non-admin participants, or the given ones (never
   * the channel's own number; those not in the group are skipped). Emits one `group_participants`
   * leave event, awaited.
   */
  async leaveParticipants(channelId: string, groupId: string, who: string[] | number, keep: string[] = []) {
    const own = simulatedOwnNumber(channelId);
    const staying = [own, ...keep.map(asPlatformWrites)];
    const at = new Date();
    const left = await this.ctx.db.transaction(async (tx) => {
      await tx.select({ id: simulatorGroups.groupId }).from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId)).for("update");
      const leaving =
        typeof who === "number"
          ? (
              await tx
                .select({ participant: simulatorParticipants.participant })
                .from(simulatorParticipants)
                .where(
                  and(
                    eq(simulatorParticipants.groupId, groupId),
                    eq(simulatorParticipants.admin, false),
                    notInArray(simulatorParticipants.participant, staying),
                  ),
                )
                .orderBy(desc(simulatorParticipants.joinedAt), desc(simulatorParticipants.participant))
                .limit(who)
            ).map((r) => r.participant)
          : [...new Set(who.map(asPlatformWrites))].filter((p) => p !== own);
      if (leaving.length === 0) return [];
      const gone = await tx
        .delete(simulatorParticipants)
        .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, leaving)))
        .returning({ participant: simulatorParticipants.participant });
      const goneSet = new Set(gone.map((r) => r.participant));
      return leaving.filter((p) => goneSet.has(p));
    });
    if (left.length > 0) await this.events.emit({ type: "group_participants", channelId, groupId, action: "leave", participants: left, at });
    return { left, members: await this.platform.size(groupId) };
  }

  /**
   * Control: an admin on a phone makes these members admins (those not in the group are skipped); returns who
   * was promoted. Reported as the platform reports it (`group_admins` promote, from the group's channel).
   */
  async promoteMembers(channelId: string, groupId: string, who: string[]) {
    const rows = await this.ctx.db
      .update(simulatorParticipants)
      .set({ admin: true })
      .where(and(eq(simulatorParticipants.groupId, groupId), inArray(simulatorParticipants.participant, [...new Set(who.map(asPlatformWrites))])))
      .returning({ participant: simulatorParticipants.participant });
    const promoted = rows.map((r) => r.participant);
    if (promoted.length > 0) await this.events.emit({ type: "group_admins", channelId, groupId, action: "promote", participants: promoted, at: new Date() });
    return promoted;
  }

  /** Control: a group admin on the phone revoked the link (a new one is made at once, as WhatsApp does). */
  async revokeInvite(channelId: string, groupId: string) {
    await this.platform.groupRow(channelId, groupId);
    const { code, revoked } = await this.platform.replaceInvite(channelId, groupId);
    return { inviteUrl: INVITE_PREFIX + code, revoked: revoked.map((c) => INVITE_PREFIX + c) };
  }

  /**
   * Control: the group vanished for the number (`exists: false`: the number is out of it; `true` brings
   * it back as admin) and/or the number lost (or got back) admin rights. No participant event.
   */
  async setGroupState(channelId: string, groupId: string, state: { exists?: boolean; admin?: boolean }) {
    await this.platform.groupRow(channelId, groupId);
    const own = simulatedOwnNumber(channelId);
    const where = and(eq(simulatorParticipants.groupId, groupId), eq(simulatorParticipants.participant, own));
    if (state.exists === false) await this.ctx.db.delete(simulatorParticipants).where(where);
    if (state.exists === true) {
      await this.ctx.db
        .insert(simulatorParticipants)
        .values({ groupId, channelId, participant: own, admin: state.admin ?? true, joinedAt: new Date() })
        .onConflictDoNothing();
    }
    if (state.admin !== undefined && state.exists !== false) await this.ctx.db.update(simulatorParticipants).set({ admin: state.admin }).where(where);
    const membership = await this.platform.ownMembership(channelId, groupId);
    return { exists: membership !== undefined, admin: membership?.admin ?? false, members: await this.platform.size(groupId) };
  }

  /** Control and tests: everyone in the group, oldest first. */
  async participants(groupId: string) {
    return this.ctx.db
      .select({ participant: simulatorParticipants.participant, admin: simulatorParticipants.admin, joinedAt: simulatorParticipants.joinedAt })
      .from(simulatorParticipants)
      .where(eq(simulatorParticipants.groupId, groupId))
      .orderBy(asc(simulatorParticipants.joinedAt), asc(simulatorParticipants.participant));
  }

  /**
   * Control: take a channel offline or bring it back; emits the status change. Back online after a logout, a ban
   * or a restriction is the number paired again: the reason is cleared.
   */
  async setOnline(channelId: string, online: boolean) {
    const [row] = await this.ctx.db
      .update(simulatorChannels)
      .set(online ? { online, health: null } : { online })
      .where(eq(simulatorChannels.channelId, channelId))
      .returning();
    if (!row) return false;
    if (row.paired) {
      await this.events.emit({ type: "channel_status", channelId, status: online ? "connected" : "disconnected", at: new Date() });
    }
    return true;
  }

  /**
   * Control: the platform takes the number off (a logout, a ban, a restriction): the channel disconnects and
   * its status event carries the reason, as a gateway's close event does. Sends then fail as offline, and list-groups
   * answers unavailable, until `setOnline(channelId, true)` (the number paired again).
   */
  async setHealth(channelId: string, reason: NumberLossReason) {
    const [row] = await this.ctx.db
      .update(simulatorChannels)
      .set({ online: false, health: reason })
      .where(eq(simulatorChannels.channelId, channelId))
      .returning();
    if (!row) return false;
    if (row.paired) {
      await this.events.emit({ type: "channel_status", channelId, status: "disconnected", reason, detail: `simulator: ${reason}`, at: new Date() });
    }
    return true;
  }

  /** Control: the platform's rate limit for the channel's sends (null: none); sends past it in a rolling minute are refused. */
  async setRateLimit(channelId: string, perMinute: number | null) {
    const [row] = await this.ctx.db
      .update(simulatorChannels)
      .set({ rateLimitPerMinute: perMinute })
      .where(eq(simulatorChannels.channelId, channelId))
      .returning({ channelId: simulatorChannels.channelId });
    return row !== undefined;
  }

  /** Control: the channel's simulated state, as the state endpoint answers it. */
  async channelControls(channelId: string) {
    const row = await this.platform.channel(channelId);
    return row && { connected: row.paired && row.online, health: row.health, rateLimitPerMinute: row.rateLimitPerMinute };
  }

  /** Control: injected failures for sends to one group through one channel (the caller's own). */
  async setFailures(channelId: string, groupId: string, spec: { failNext?: number; always?: boolean }) {
    const set = { failNext: spec.failNext ?? 0, always: spec.always ?? false };
    await this.ctx.db
      .insert(simulatorFailures)
      .values({ channelId, groupId, ...set })
      .onConflictDoUpdate({ target: [simulatorFailures.channelId, simulatorFailures.groupId], set });
  }

  /** Control: per-send latency of one tenant's channels (the others are not slowed). */
  async setLatency(tenantId: string, ms: number) {
    await this.ctx.db
      .insert(simulatorLatency)
      .values({ tenantId, latencyMs: ms })
      .onConflictDoUpdate({ target: simulatorLatency.tenantId, set: { latencyMs: ms } });
  }

  /**
   * Control: people in the group vote on the poll the campaign sent there (docs/simulator.md#polls). For each
   * option named, its votes in that group become exactly N: synthetic voters `o<option index>-<1…N>` choose it
   * (one option each) and that option's higher-numbered synthetic voters take their vote back. Sent again, the
   * same call changes nothing. Emits one `poll_votes` event, awaited and recorded (a failure throws).
   */
  async castPollVotes(channelIds: string[], campaignId: string, groupId: string, votes: Record<string, number>): Promise<PollCastOutcome> {
    if (channelIds.length === 0) return { kind: "no_poll" };
    const [sent] = await this.ctx.db
      .select({ channelId: simulatorMessages.channelId, deliveryKey: simulatorMessages.deliveryKey, poll: simulatorMessages.poll })
      .from(simulatorMessages)
      .where(
        and(
          inArray(simulatorMessages.channelId, channelIds),
          eq(simulatorMessages.campaignId, campaignId),
          eq(simulatorMessages.groupId, groupId),
          eq(simulatorMessages.messageType, "poll"),
        ),
      )
      .limit(1);
    const poll = sent?.poll as PollContent | null | undefined;
    if (!sent || !poll) return { kind: "no_poll" };
    const unknown = Object.keys(votes).filter((o) => !poll.options.includes(o));
    if (unknown.length > 0) return { kind: "unknown_options", unknown, options: poll.options };
    const at = new Date();
    const cast: PollVote[] = Object.entries(votes).flatMap(([option, n]) => {
      const index = poll.options.indexOf(option);
      return Array.from({ length: SIMULATOR_GROUP_LIMIT }, (_, i) => ({ voter: `o${index}-${i + 1}`, options: i < n ? [option] : [], at }));
    });
    await this.events.emitRecorded({ type: "poll_votes", channelId: sent.channelId, deliveryKey: sent.deliveryKey, votes: cast, at });
    return { kind: "cast", options: poll.options };
  }

  /** The durable message log, for the inspection endpoint. */
  async messages(filter: { channelIds: string[]; groupId?: string; campaignId?: string; after?: Date }) {
    if (filter.channelIds.length === 0) return [];
    return this.ctx.db
      .select()
      .from(simulatorMessages)
      .where(
        and(
          inArray(simulatorMessages.channelId, filter.channelIds),
          filter.groupId ? eq(simulatorMessages.groupId, filter.groupId) : undefined,
          filter.campaignId ? eq(simulatorMessages.campaignId, filter.campaignId) : undefined,
          filter.after ? gt(simulatorMessages.sentAt, filter.after) : undefined,
        ),
      )
      .orderBy(simulatorMessages.sentAt);
  }
}
