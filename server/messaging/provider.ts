/**
 * What the service needs from a chat platform. The simulator and the Evolution API provider
 * implement it; dispatch, segments and channels only ever talk to this interface. Its types live by
 * concern beside it (provider-send.ts, provider-events.ts, provider-pairing.ts, provider-groups.ts) and
 * are re-exported here.
 */
import type { CreatedGroup, GroupChange, GroupSettings, GroupState, NewGroup, ParticipantOutcome, ProviderGroup } from "./provider-groups";
import type { LidPhone, ProviderListener } from "./provider-events";
import type { ChannelStatus, PairingInfo, PairingOptions } from "./provider-pairing";
import type { LookupResult, OutboundMessage, SendManyOptions, SendOutcome, SendReceipt, SentLookup } from "./provider-send";

export * from "./provider-events";
export * from "./provider-groups";
export * from "./provider-pairing";
export * from "./provider-send";

export interface ProviderCapabilities {
  carousel: boolean;
  forward: boolean;
  linkPreview: boolean;
  mentionAll: boolean;
  /** The platform reports acks and reads of group messages (Evolution API does not forward them). */
  receipts: boolean;
  /** The most options a poll may have on this platform (WhatsApp: 12; Evolution API's sendPoll: 10). */
  pollOptions: number;
}

export interface MessagingProvider {
  readonly name: "simulator" | "evolution";
  readonly capabilities: ProviderCapabilities;
  /**
   * How long after a lost answer a look-up means something (the platform may still be sending):
   * unknown outcomes are looked up this long after the attempt, and resent only after two negative
   * look-ups this far apart. 0: the platform's log is authoritative at once (the simulator).
   */
  readonly reconcileAfterMs: number;
  /** Registers a new connection; it starts `connecting` until paired. Returns the provider's reference. */
  createChannel(channel: { id: string; name: string }): Promise<{ ref: string; status: ChannelStatus }>;
  getStatus(channelId: string): Promise<ChannelStatus>;
  /** Throws ProviderUnavailableError when the groups cannot be queried. */
  listGroups(channelId: string): Promise<ProviderGroup[]>;
  /**
   * Throws ProviderSendError, ProviderUnavailableError or ProviderOutcomeUnknownError. Never sends again
   * on its own after a lost answer; callers must not rely on any deduplication by deliveryKey.
   */
  send(message: OutboundMessage): Promise<SendReceipt>;
  /**
   * Sends a loop's messages, in order, one outcome per message (never throws for one message's
   * failure). A gateway that sends one at a time implements it with `sendEach`. `signal`: once it is
   * aborted (the campaign's lease may be lost), no further message is sent; those not sent are answered
   * ProviderUnavailableError (the caller leaves them for reconciliation).
   */
  sendMany(messages: OutboundMessage[], options?: SendManyOptions): Promise<SendOutcome[]>;
  /**
   * Reconciliation of an unknown outcome (lost answer, crash mid-send): did this delivery go out?
   * Throws when the platform cannot be asked now.
   */
  findSent(lookup: SentLookup): Promise<LookupResult>;
  /**
   * Pairing data for the dashboard; `phoneNumber` (digits with country code) asks for a pairing code
   * to type on the phone instead of scanning the QR code.
   */
  pairing(channelId: string, options?: PairingOptions): Promise<PairingInfo>;
  /** Logs the number out; the channel becomes `disconnected` (a new pairing brings it back). */
  disconnectChannel(channelId: string): Promise<void>;
  /** Removes the connection from the platform. */
  deleteChannel(channelId: string): Promise<void>;
  /**
   * Whether the platform reports poll votes now (docs/polls.md): the simulator always; Evolution API from
   * 2.3.7 on (earlier releases drop vote messages before any webhook). false: votes are unavailable, not zero.
   */
  pollVotesAvailable(): Promise<boolean>;
  /** Status changes, acks and read receipts. Returns an unsubscribe function. */
  subscribe(listener: ProviderListener): () => void;

  // ---- group management (launches) ----
  /**
   * Creates a group administered by the channel's number (picture, description, admins-only and the
   * admins promoted, as far as the platform allows). Never makes a second group for one creation: a
   * platform that can fail after making the group looks it up and answers it (`adopted`). Throws
   * ProviderUnavailableError when the channel cannot act now (nothing made), ProviderSendError when the
   * platform refused (nothing made; `rateLimited` when it throttled the number),
   * ProviderOutcomeUnknownError when it may have been made and cannot be looked up yet (asking again with
   * the same `key` or name looks it up before making another).
   */
  createGroup(channelId: string, group: NewGroup): Promise<CreatedGroup>;
  /**
   * Promotes participants (phone numbers) to admin; those not in the group are added first where the platform
   * allows. Answers each participant as the platform did (a refusal is an outcome, not an error).
   */
  promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<ParticipantOutcome[]>;
  /** The group's current invite link, `https://chat.whatsapp.com/<code>` (the channel must be an admin). */
  inviteUrl(channelId: string, groupId: string): Promise<string>;
  /** Revokes the current invite link and returns the new one. */
  renewInviteUrl(channelId: string, groupId: string): Promise<string>;
  /** Whether the group still exists, the channel's number is an admin, and how many are in it. */
  groupState(channelId: string, groupId: string): Promise<GroupState>;
  /** The channel's own number (digits with country code), or null when not known yet (not paired). */
  ownNumber(channelId: string): Promise<string | null>;
  /**
   * The LID ⇄ phone pairings the platform shares for the people now in a group (Evolution: its participant
   * list), to look up a LID an event came with alone. Absent where participants never come as LIDs (the
   * simulator). Throws ProviderUnavailableError when the platform cannot answer now.
   */
  participantPairs?(channelId: string, groupId: string): Promise<LidPhone[]>;

  // ---- group settings (group actions; docs/groups.md) ----
  /**
   * Applies one setting change through the channel's number. Throws GroupChangeRefusedError when the number is not an
   * admin or the group is gone (nothing changed), ProviderSendError when the platform refused otherwise (`rateLimited`
   * when it throttled the number), ProviderUnavailableError when the channel cannot act now, ProviderOutcomeUnknownError
   * when the answer was lost (read the group back before applying again).
   */
  changeGroup(channelId: string, groupId: string, change: GroupChange): Promise<void>;
  /** The group's metadata as the channel's number sees it, or null when the group is gone for it. Throws ProviderUnavailableError. */
  groupSettings(channelId: string, groupId: string): Promise<GroupSettings | null>;
}
