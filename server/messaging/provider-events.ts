/**
 * What a provider reports (MessagingProvider's subscribe; provider.ts): channel status changes, receipts, group
 * joins and leaves, poll votes, and the listeners they go to.
 */
import { recognisedAcrossCopies } from "../errors";
import type { ChannelStatus } from "./provider-pairing";

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
      /**
       * When it happened on the platform's side (the gateway's own time where the event carries one), the
       * order joins and leaves are applied in (docs/launches.md#the-order-of-joins-and-leaves).
       */
      at: Date;
      /** When our side got it, when that is not `at` (a gateway's resend); default `at`. */
      receivedAt?: Date;
    }
  /**
   * Members were made admins of a group, or admins members (Evolution's `group-participants.update` promote/demote; the
   * simulator's promotions and group actions): who is exempt from moderation is read again. Participants as in
   * `group_participants`.
   */
  | { type: "group_admins"; channelId: string; groupId: string; action: "promote" | "demote"; participants: string[]; at: Date }
  /**
   * A member posted in a group (Evolution's `messages.upsert` of a group message not from the number itself; the
   * simulator's control): read by moderation (docs/moderation.md#messages). `sender` is a phone number (digits) when
   * the platform gave it, else its LID; `messageId` is the platform's id (the same on every delivery and every channel
   * in the group). Emitted recorded: a failure answers the gateway 5xx and it sends the message again.
   */
  | {
      type: "group_message";
      channelId: string;
      groupId: string;
      messageId: string;
      sender: string;
      /** The platform's own id of the sender as the message's key names it (Evolution: `key.participant`), what a delete names. */
      senderId?: string;
      pairs?: LidPhone[];
      /** The text or the caption (empty for a message without one). */
      text: string;
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

// The services (and so the provider) may come from another copy of this module than the caller's.
recognisedAcrossCopies({ EventNotRecordedError });
