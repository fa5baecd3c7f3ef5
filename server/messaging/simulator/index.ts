import { and, eq, lte } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { simulatorChannels, simulatorFailures, simulatorGroupCreateLimits, simulatorGroups, simulatorInvites, simulatorParticipants } from "../../../db/schema";
import type {
  ChannelStatus,
  CreatedGroup,
  GroupChange,
  GroupSettings,
  GroupState,
  LookupResult,
  MessagingProvider,
  NewGroup,
  OutboundMessage,
  PairingInfo,
  ParticipantOutcome,
  ProviderGroup,
  ProviderListener,
  SendManyOptions,
  SendOutcome,
  SendReceipt,
  SentLookup,
} from "../provider";
import { SimulatorControls } from "./controls";
import { SimulatedGroups } from "./groups";
import { SimulatedGroupSettings } from "./group-settings";
import type { SimulatorOptions } from "./platform";
import { SimulatedSends } from "./send";

export type { JoinOutcome, PollCastOutcome } from "./controls";
export type { SimulatorOptions } from "./platform";
export { derivedGroup, SIMULATOR_GROUP_LIMIT, simulatedGroups, simulatedOwnNumber } from "./simulated";

/**
 * The simulated chat platform: durable (its state is in the service's database, so it survives
 * restarts like a real gateway would), deduplicating sends by delivery key. This class is the
 * MessagingProvider; the control API it inherits (controls.ts) is what the /api/simulator routes call.
 */
export class SimulatorProvider extends SimulatorControls implements MessagingProvider {
  readonly name = "simulator" as const;
  readonly capabilities = { carousel: true, forward: true, linkPreview: true, mentionAll: true, receipts: true, pollOptions: 12 };
  readonly reconcileAfterMs = 0;
  private readonly groups: SimulatedGroups;
  /** Group settings (group actions), public for the control endpoint's view of a group. */
  readonly groupSettingsOf: SimulatedGroupSettings;
  private readonly sends: SimulatedSends;

  constructor(db: Db, opts: SimulatorOptions) {
    super(db, opts);
    this.groups = new SimulatedGroups(this.ctx, this.platform);
    this.groupSettingsOf = new SimulatedGroupSettings(this.ctx, this.platform);
    this.sends = new SimulatedSends(this.ctx, this.platform);
  }

  subscribe(listener: ProviderListener) {
    return this.events.subscribe(listener);
  }

  // ---- channels ----

  async createChannel(channel: { id: string; name: string }) {
    const pairsAt = new Date(Date.now() + this.ctx.opts.pairingMs);
    await this.ctx.db.insert(simulatorChannels).values({ channelId: channel.id, pairsAt }).onConflictDoNothing();
    if (this.ctx.opts.pairingMs > 0) setTimeout(() => void this.pairDue(), this.ctx.opts.pairingMs).unref?.();
    else await this.pairDue(pairsAt);
    return { ref: `sim-${channel.id.slice("channel_".length, "channel_".length + 8)}`, status: await this.getStatus(channel.id) };
  }

  /** Pairs every channel whose pairing time has come; also run at start for channels left mid-pairing. */
  async pairDue(now = new Date()) {
    const paired = await this.ctx.db
      .update(simulatorChannels)
      .set({ paired: true })
      .where(and(eq(simulatorChannels.paired, false), lte(simulatorChannels.pairsAt, now)))
      .returning({ channelId: simulatorChannels.channelId, online: simulatorChannels.online });
    for (const ch of paired) {
      await this.events.emit({ type: "channel_status", channelId: ch.channelId, status: ch.online ? "connected" : "disconnected", at: now });
    }
  }

  getStatus(channelId: string): Promise<ChannelStatus> {
    return this.platform.getStatus(channelId);
  }

  async pairing(channelId: string): Promise<PairingInfo> {
    return { status: await this.getStatus(channelId), qrCode: null, pairingCode: null, automatic: true };
  }

  /** A logout ends the session, as on WhatsApp: the channel disconnects as `logged_out` and must be paired again. */
  async disconnectChannel(channelId: string) {
    await this.setHealth(channelId, "logged_out");
  }

  async deleteChannel(channelId: string) {
    await this.ctx.db.delete(simulatorChannels).where(eq(simulatorChannels.channelId, channelId));
    await this.ctx.db.delete(simulatorFailures).where(eq(simulatorFailures.channelId, channelId));
    await this.ctx.db.delete(simulatorGroupCreateLimits).where(eq(simulatorGroupCreateLimits.channelId, channelId));
    await this.ctx.db.delete(simulatorInvites).where(eq(simulatorInvites.channelId, channelId));
    await this.ctx.db.delete(simulatorParticipants).where(eq(simulatorParticipants.channelId, channelId));
    await this.ctx.db.delete(simulatorGroups).where(eq(simulatorGroups.channelId, channelId));
  }

  ownNumber(channelId: string): Promise<string | null> {
    return this.groups.ownNumber(channelId);
  }

  // ---- groups (launches; docs/simulator.md#groups-invite-links-and-participants) ----

  listGroups(channelId: string): Promise<ProviderGroup[]> {
    return this.groups.listGroups(channelId);
  }

  createGroup(channelId: string, group: NewGroup): Promise<CreatedGroup> {
    return this.groups.createGroup(channelId, group);
  }

  promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<ParticipantOutcome[]> {
    return this.groups.promoteParticipants(channelId, groupId, participants);
  }

  inviteUrl(channelId: string, groupId: string): Promise<string> {
    return this.groups.inviteUrl(channelId, groupId);
  }

  renewInviteUrl(channelId: string, groupId: string): Promise<string> {
    return this.groups.renewInviteUrl(channelId, groupId);
  }

  groupState(channelId: string, groupId: string): Promise<GroupState> {
    return this.groups.groupState(channelId, groupId);
  }

  // ---- group settings (group actions; docs/simulator.md#group-settings) ----

  changeGroup(channelId: string, groupId: string, change: GroupChange): Promise<void> {
    return this.groupSettingsOf.changeGroup(channelId, groupId, change);
  }

  groupSettings(channelId: string, groupId: string): Promise<GroupSettings | null> {
    return this.groupSettingsOf.groupSettings(channelId, groupId);
  }

  // ---- sending ----

  /** The simulator reports every vote cast through its control (docs/simulator.md#polls). */
  async pollVotesAvailable() {
    return true;
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const [outcome] = await this.sendMany([message]);
    if (!outcome.ok) throw outcome.error;
    return outcome.receipt;
  }

  sendMany(messages: OutboundMessage[], options: SendManyOptions = {}): Promise<SendOutcome[]> {
    return this.sends.sendMany(messages, options);
  }

  findSent(lookup: SentLookup): Promise<LookupResult> {
    return this.sends.findSent(lookup);
  }
}
