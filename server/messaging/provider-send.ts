/**
 * What a provider sends and how a send can end (MessagingProvider's send, sendMany and findSent; provider.ts): the
 * message, its receipt or error, and the look-up of a send whose answer was lost.
 */
import { recognisedAcrossCopies } from "../errors";

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
  /** Participants mentioned by id (numbers or platform ids: a launch's welcome); the text carries their `@<number>` itself. */
  mentions?: string[];
  /** Forward an already sent message instead of sending again, where the provider can. */
  forwardOf?: { groupId: string; messageId: string };
}

export interface SendReceipt {
  messageId: string;
  sentAt: Date;
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

/**
 * The platform cannot answer now (offline channel, gateway down): callers answer 503 or retry. `retryAfterMs`: the
 * channel may take sends again in a moment (a number reconnecting within its grace): a send is tried again after that
 * long, on whichever channel holds it by then.
 */
export class ProviderUnavailableError extends Error {
  readonly retryAfterMs?: number;
  constructor(message: string, options: { retryAfterMs?: number } = {}) {
    super(message);
    this.name = "ProviderUnavailableError";
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The platform refused this one send (it did not go out); `transient` sends may succeed when retried.
 * `rateLimited`: the platform asked us to slow down (the channel's pacing widens). `notInGroup`: the number is
 * not in the group (or not an admin where only admins post): it no longer reaches it, and the delivery moves to
 * a channel that does (failover, CONTRACT §7) instead of being retried.
 */
export class ProviderSendError extends Error {
  readonly rateLimited: boolean;
  readonly notInGroup: boolean;
  constructor(
    message: string,
    readonly transient: boolean,
    options: { rateLimited?: boolean; notInGroup?: boolean } = {},
  ) {
    super(message);
    this.name = "ProviderSendError";
    this.rateLimited = options.rateLimited ?? false;
    this.notInGroup = options.notInGroup ?? false;
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
recognisedAcrossCopies({ ProviderUnavailableError, ProviderSendError, ProviderOutcomeUnknownError });

export interface SendManyOptions {
  /** Checked before each message: aborted, the rest is not sent. */
  signal?: AbortSignal;
}

/** The outcome of a message sendMany did not send because its signal was aborted. */
export const notSent = (): SendOutcome => ({ ok: false, error: new ProviderUnavailableError("not sent: the sending step stopped (its lease may be lost)") });

/** sendMany for providers that can only send one message at a time. */
export async function sendEach(
  provider: { send(message: OutboundMessage): Promise<SendReceipt> },
  messages: OutboundMessage[],
  options: SendManyOptions = {},
): Promise<SendOutcome[]> {
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
