import type { Db } from "../../../db/client";
import {
  ProviderEvents,
  sendEach,
  type ChannelStatus,
  type CreatedGroup,
  type GroupChange,
  type GroupSettings,
  type GroupState,
  type LidPhone,
  type LookupResult,
  type MessagingProvider,
  type NewGroup,
  type OutboundMessage,
  type PairingInfo,
  type PairingOptions,
  type ParticipantOutcome,
  type ProviderGroup,
  type ProviderListener,
  type SendManyOptions,
  type SendReceipt,
  type SentLookup,
} from "../provider";
import { EvolutionClient } from "./client";
import type { EvolutionContext, EvolutionOptions } from "./context";
import { SentLookups } from "./find-sent";
import { Gateway, type GatewayCheck } from "./gateway-check";
import { GroupCreator } from "./group-create";
import { GroupListings } from "./group-listing";
import { GroupSettingsCalls } from "./group-settings";
import { Groups } from "./groups";
import { Instances } from "./instances";
import { Pairings } from "./pairing";
import { Sender } from "./send";
import { WebhookIntake } from "./webhook";

export type { EvolutionOptions } from "./context";
export { type EvolutionMessageRecord, partFingerprint, recordFingerprint } from "./find-sent";
export { compareVersions, type GatewayCheck, gatewayReminders } from "./gateway-check";
export { evolutionWebhookEvents, lossReason, webhookTokenHeader } from "./instances";
export { pairingCodeLifetimeMs } from "./pairing";
export { classifySendError, mediaFileName, requestedMessageId } from "./send";

/**
 * Evolution API v2 behind the provider interface: one Evolution instance per channel (named after the
 * channel id), pairing by QR code or pairing code, groups cached (fetchAllGroups is slow and
 * rate-limited), sends deduplicated by a message id derived from the delivery key and reconciled with
 * /chat/findMessages whenever an answer is lost, webhooks authenticated by a per-instance secret.
 * Each concern is its own part (this folder); the class only composes them.
 */
export class EvolutionProvider implements MessagingProvider {
  readonly name = "evolution" as const;
  /** Baileys cannot send carousels or buttons to groups, nor forward with our bookkeeping: the service plans around it. */
  /** …nor report acks and reads of group messages (Baileys' message-receipt.update is not forwarded). */
  readonly capabilities = { carousel: false, forward: false, linkPreview: true, mentionAll: true, receipts: false, pollOptions: 10 };
  readonly reconcileAfterMs: number;
  private readonly ctx: EvolutionContext;
  private readonly instances: Instances;
  private readonly pairings: Pairings;
  private readonly listings: GroupListings;
  private readonly groups: Groups;
  private readonly settings: GroupSettingsCalls;
  private readonly creations: GroupCreator;
  private readonly gateway: Gateway;
  private readonly sender: Sender;
  private readonly lookups: SentLookups;
  private readonly intake: WebhookIntake;

  constructor(db: Db, opts: EvolutionOptions) {
    this.reconcileAfterMs = opts.reconcileAfterMs ?? 300_000;
    const client = new EvolutionClient({
      baseUrl: opts.apiUrl,
      apiKey: opts.apiKey,
      timeoutMs: opts.timeoutMs,
      retries: opts.retries,
      backoffMs: opts.backoffMs,
    });
    const ctx = { db, opts, client, events: new ProviderEvents("evolution"), reconcileAfterMs: this.reconcileAfterMs };
    this.ctx = ctx;
    this.gateway = new Gateway(ctx);
    this.instances = new Instances(ctx, this.gateway);
    this.pairings = new Pairings(ctx, this.instances);
    this.listings = new GroupListings(ctx, this.instances);
    this.groups = new Groups(ctx, this.instances, this.listings);
    this.settings = new GroupSettingsCalls(this.groups);
    this.creations = new GroupCreator(ctx, this.instances, this.listings, this.groups);
    this.sender = new Sender(ctx, this.instances, this.gateway, (channelId, groupId) => this.groups.groupState(channelId, groupId));
    this.lookups = new SentLookups(ctx, this.instances);
    this.intake = new WebhookIntake(ctx, this.instances, this.listings, this.gateway);
  }

  subscribe(listener: ProviderListener) {
    return this.ctx.events.subscribe(listener);
  }

  // ---- group settings (group actions; docs/evolution.md#group-settings-group-actions) ----

  changeGroup(channelId: string, groupId: string, change: GroupChange): Promise<void> {
    return this.settings.changeGroup(channelId, groupId, change);
  }

  groupSettings(channelId: string, groupId: string): Promise<GroupSettings | null> {
    return this.settings.groupSettings(channelId, groupId);
  }

  // ---- instances and pairing ----

  /** Where the gateway posts one channel's events; the secret travels in the `x-webhook-token` header. */
  webhookUrl(channelId: string) {
    return this.instances.webhookUrl(channelId);
  }

  createChannel(channel: { id: string; name: string }) {
    return this.instances.createChannel(channel);
  }

  getStatus(channelId: string): Promise<ChannelStatus> {
    return this.instances.getStatus(channelId);
  }

  /** The missed-webhook safety net (every minute): each channel's live state, applied when it changed (docs/evolution.md#missed-webhooks-the-state-poll). */
  pollStates(): Promise<number> {
    return this.instances.pollStates();
  }

  pairing(channelId: string, options: PairingOptions = {}): Promise<PairingInfo> {
    return this.pairings.pairing(channelId, options);
  }

  disconnectChannel(channelId: string) {
    return this.instances.disconnectChannel(channelId);
  }

  deleteChannel(channelId: string) {
    return this.instances.deleteChannel(channelId);
  }

  ownNumber(channelId: string): Promise<string | null> {
    return this.instances.ownNumber(channelId);
  }

  // ---- groups (launches; docs/evolution.md#groups-for-launches) ----

  listGroups(channelId: string): Promise<ProviderGroup[]> {
    return this.listings.listGroups(channelId);
  }

  createGroup(channelId: string, group: NewGroup): Promise<CreatedGroup> {
    return this.creations.createGroup(channelId, group);
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

  participantPairs(channelId: string, groupId: string): Promise<LidPhone[]> {
    return this.groups.participantPairs(channelId, groupId);
  }

  // ---- sending ----

  send(message: OutboundMessage): Promise<SendReceipt> {
    return this.sender.send(message);
  }

  sendMany(messages: OutboundMessage[], options?: SendManyOptions) {
    return sendEach(this, messages, options);
  }

  findSent(lookup: SentLookup): Promise<LookupResult> {
    return this.lookups.findSent(lookup);
  }

  /** Votes reach our webhook from Evolution API 2.3.7 on (docs/evolution.md#polls). */
  pollVotesAvailable(): Promise<boolean> {
    return this.gateway.reportsPollVotes();
  }

  // ---- webhooks and the gateway ----

  verifyWebhook(channelId: string, secret: string): Promise<boolean> {
    return this.intake.verifyWebhook(channelId, secret);
  }

  handleWebhook(channelId: string, secret: string, payload: unknown): Promise<boolean> {
    return this.intake.handleWebhook(channelId, secret, payload);
  }

  checkGateway(): Promise<GatewayCheck> {
    return this.gateway.checkGateway();
  }
}
