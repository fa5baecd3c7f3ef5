/**
 * What the service needs from a chat platform. The simulator and the Evolution API provider
 * implement it; dispatch, segments and channels only ever talk to this interface.
 */
import { recognisedAcrossCopies } from "../errors";

export type ChannelStatus = "connecting" | "connected" | "disconnected";

export interface ProviderGroup {
  id_group: string;
  name: string;
  /** Only admins may post (WhatsApp's `announce`): a send may be refused unless the number is an admin. Internal (dashboard only). */
  adminsOnly?: boolean;
}

export interface CarouselCard {
  image_url: string;
  text: string;
  buttons: { label: string; type: "URL"; url: string }[];
}

/** A poll (WhatsApp's): the question, its distinct options, and whether a voter may choose several. */
export interface PollContent {
  question: string;
  options: string[];
  multiple_answers: boolean;
}

export type MessageContent =
  | { type: "text"; text: string }
  | { type: "image" | "video" | "audio" | "document"; mediaUrl: string; caption: string; fileName?: string }
  | { type: "carousel"; text: string; cards: CarouselCard[] }
  | { type: "poll"; poll: PollContent };

export interface OutboundMessage {
  channelId: string;
  groupId: string;
  /** Stable per (campaign, group): the provider must not deliver twice under one key. */
  deliveryKey: string;
  campaignId?: string;
  content: MessageContent;
  linkPreview: false | { type: "auto" | "large" | "small" };
  mentionAll: boolean;
  /** Forward an already sent message instead of sending again, where the provider can. */
  forwardOf?: { groupId: string; messageId: string };
}

export interface SendReceipt {
  messageId: string;
  sentAt: Date;
}

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

/** What the dashboard shows while a channel pairs: a QR code (data URL) and/or a pairing code. */
export interface PairingInfo {
  status: ChannelStatus;
  qrCode: string | null;
  pairingCode: string | null;
  /** When the pairing code stops working (WhatsApp: about 60 s after it was made); null without a code. */
  pairingCodeExpiresAt?: Date | null;
  /** No live pairing session (logged out, or the gateway gave up after too many QR codes): pairing must be asked for again. */
  sessionClosed?: boolean;
  /** A pairing code was asked for and the platform has not made it yet: it comes in a few seconds (poll again). */
  pairingCodePending?: boolean;
  /** The simulator pairs by itself; a real gateway waits for the phone. */
  automatic: boolean;
}

export interface PairingOptions {
  /** Digits with country code: a pairing code to type on the phone instead of scanning the QR code. */
  phoneNumber?: string;
  /** Start a new pairing session when none is live ("Gerar novamente"). */
  restart?: boolean;
}

export interface Receipt {
  channelId: string;
  deliveryKey: string;
  messageId: string;
}

/**
 * Why the platform took a number off (CONTRACT §7 "Health"): `logged_out` (the session was ended: pair again),
 * `banned` (for good: pair again, usually another number), `restricted` (a temporary ban).
 */
export const numberLossReasons = ["restricted", "banned", "logged_out"] as const;
export type NumberLossReason = (typeof numberLossReasons)[number];

/** Receipts come in batches (a gateway reports many at once); `at` is when the platform saw them. */
export type ProviderEvent =
  | {
      type: "channel_status";
      channelId: string;
      status: ChannelStatus;
      at: Date;
      /** A disconnect the platform explained (a logout, a ban, a restriction): the number's health follows it. */
      reason?: NumberLossReason;
      /** The platform's own words for it (e.g. "statusReason 403 forbidden"), kept as the health's reason. */
      detail?: string;
    }
  | { type: "message_ack"; receipts: Receipt[]; at: Date }
  | { type: "message_read"; receipts: Receipt[]; at: Date }
  /** The platform reports a message going out (Evolution's `send.message`): settles a send whose answer was lost. */
  | { type: "message_sent"; receipts: Receipt[]; at: Date }
  /**
   * People joined or left a group (Evolution's `group-participants.update` add/remove). A participant is
   * a phone number (digits with country code) when the platform gave it, else its opaque id (a LID such as
   * `1234@lid`). `pairs`: the LID ⇄ phone pairings the event carried (one person under both ids).
   */
  | {
      type: "group_participants";
      channelId: string;
      groupId: string;
      action: "join" | "leave";
      participants: string[];
      pairs?: LidPhone[];
      /** The same for every delivery of one event (a gateway resending it): recorded once. */
      eventId?: string;
      at: Date;
    }
  /** Votes on a poll the service sent (`deliveryKey` names the delivery that carried it). */
  | { type: "poll_votes"; channelId: string; deliveryKey: string; votes: PollVote[]; at: Date };

/**
 * One person's current choice in a poll: the option texts chosen (empty: the vote was taken back). A later
 * vote of the same voter replaces the earlier one (WhatsApp sends the whole choice each time).
 */
export interface PollVote {
  voter: string;
  options: string[];
  /** When the platform saw this vote. */
  at: Date;
}

/** One person's two ids on WhatsApp: the opaque LID (`<digits>@lid`) and the phone number it stands for (digits). */
export interface LidPhone {
  lid: string;
  phone: string;
}

export type ProviderListener = (event: ProviderEvent) => Promise<void> | void;

/** A listener could not record an event: the gateway must be told (a 5xx), so that it sends the event again. */
export class EventNotRecordedError extends Error {
  constructor(
    readonly event: ProviderEvent["type"],
    readonly causes: unknown[],
  ) {
    super(`a ${event} event could not be recorded: ${causes.map((c) => (c instanceof Error ? c.message : String(c))).join("; ")}`);
    this.name = "EventNotRecordedError";
  }
}

/** A provider's event listeners: each event goes to every listener in turn; one failing does not stop the rest. */
export class ProviderEvents {
  private readonly listeners = new Set<ProviderListener>();

  constructor(private readonly label: string) {}

  subscribe(listener: ProviderListener) {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Failures are logged and swallowed (events the platform never sends again, or that something else repairs). */
  async emit(event: ProviderEvent) {
    await this.run(event);
  }

  /**
   * As emit, but when a listener failed, throws EventNotRecordedError once every listener has run: for
   * events the gateway sends again when told they were not recorded (their recording is idempotent).
   */
  async emitRecorded(event: ProviderEvent) {
    const failures = await this.run(event);
    if (failures.length > 0) throw new EventNotRecordedError(event.type, failures);
  }

  private async run(event: ProviderEvent): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (err) {
        console.error(`[${this.label}] event listener failed`, err);
        failures.push(err);
      }
    }
    return failures;
  }
}

/**
 * The outcome of one message of a sendMany call: its receipt, why it failed, or that its answer was
 * lost (`ProviderOutcomeUnknownError`: it may have gone out; the caller must not send it again before
 * a look-up says it did not).
 */
export type SendOutcome = { ok: true; receipt: SendReceipt } | { ok: false; error: ProviderSendError | ProviderUnavailableError | ProviderOutcomeUnknownError };

/** What a look-up needs to find a send whose answer was lost (docs/decisions.md#evolution-api). */
export interface SentLookup {
  channelId: string;
  groupId: string;
  deliveryKey: string;
  content: MessageContent;
  /** When the attempt whose outcome is unknown started. */
  since: Date;
}

/**
 * A look-up's answer: `sent`; `absent` (never reached the platform: safe to send now); `not_found`
 * (not seen so far; it may still be going out: look again later); `unsearchable` (the content cannot
 * be recognised on the platform, e.g. a voice note on a gateway that ignores our ids).
 */
export type LookupResult = { kind: "sent"; receipt: SendReceipt } | { kind: "absent" } | { kind: "not_found" } | { kind: "unsearchable" };

/** The platform cannot answer now (offline channel, gateway down): callers answer 503 or retry. */
export class ProviderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProviderUnavailableError";
  }
}

/**
 * The platform refused this one send (it did not go out); `transient` sends may succeed when retried.
 * `rateLimited`: the platform asked us to slow down (the channel's pacing widens).
 */
export class ProviderSendError extends Error {
  readonly rateLimited: boolean;
  constructor(
    message: string,
    readonly transient: boolean,
    options: { rateLimited?: boolean } = {},
  ) {
    super(message);
    this.name = "ProviderSendError";
    this.rateLimited = options.rateLimited ?? false;
  }
}

/**
 * The answer to a send (or a group creation) was lost (time-out, reset after the request went out, 5xx):
 * it may have gone out. `rateLimited`: the platform also said to slow down (WhatsApp's rate-overlimit).
 */
export class ProviderOutcomeUnknownError extends Error {
  readonly rateLimited: boolean;
  constructor(message: string, options: { rateLimited?: boolean } = {}) {
    super(message);
    this.name = "ProviderOutcomeUnknownError";
    this.rateLimited = options.rateLimited ?? false;
  }
}

// The services (and so the provider) may come from another copy of this module than the caller's.
recognisedAcrossCopies({ ProviderUnavailableError, ProviderSendError, ProviderOutcomeUnknownError, EventNotRecordedError });

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
  /** Promotes participants (phone numbers) to admin; those not in the group are added first where the platform allows. */
  promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<void>;
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
}

/** A group to create (docs/decisions.md#launches): the launch's template with `{n}` already replaced. */
export interface NewGroup {
  /**
   * The caller's name for this creation (a launch's slot): asked again with the same key, a provider that
   * can lose answers answers the group it already made instead of making another.
   */
  key?: string;
  name: string;
  description?: string;
  /** A public http(s) image URL set as the group's picture. */
  pictureUrl?: string;
  /** Only admins may post (WhatsApp's `announce`). */
  adminsOnly: boolean;
  /** Phone numbers (digits with country code) added at creation and promoted to admin. */
  admins: string[];
}

/** A created group. */
export interface CreatedGroup extends ProviderGroup {
  /** The platform failed or lost its answer after making the group, and the provider found it (it is this creation's group). */
  adopted?: boolean;
  /** The platform throttled the number while making it (WhatsApp's rate-overlimit): make no other group on it now. */
  rateLimited?: boolean;
}

/** What the invite-link check needs to know about a group the channel administers. */
export interface GroupState {
  /** false: the group is gone, or the number is no longer in it. */
  exists: boolean;
  /** The channel's number is an admin (only admins can read or renew the invite link). */
  admin: boolean;
  /** Everyone in the group, the channel's number included. */
  size: number;
  /** The LID ⇄ phone pairings its participant list carried (a platform that lists people by LID). */
  pairs?: LidPhone[];
}

export interface SendManyOptions {
  /** Checked before each message: aborted, the rest is not sent. */
  signal?: AbortSignal;
}

/** The outcome of a message sendMany did not send because its signal was aborted. */
export const notSent = (): SendOutcome => ({ ok: false, error: new ProviderUnavailableError("not sent: the sending step stopped (its lease may be lost)") });

/** sendMany for providers that can only send one message at a time. */
export async function sendEach(provider: Pick<MessagingProvider, "send">, messages: OutboundMessage[], options: SendManyOptions = {}): Promise<SendOutcome[]> {
  const outcomes: SendOutcome[] = [];
  for (const m of messages) {
    if (options.signal?.aborted) {
      outcomes.push(notSent());
      continue;
    }
    try {
      outcomes.push({ ok: true, receipt: await provider.send(m) });
    } catch (err) {
      if (err instanceof ProviderSendError || err instanceof ProviderUnavailableError || err instanceof ProviderOutcomeUnknownError)
        outcomes.push({ ok: false, error: err });
      else outcomes.push({ ok: false, error: new ProviderSendError(err instanceof Error ? err.message : String(err), true) });
    }
  }
  return outcomes;
}
