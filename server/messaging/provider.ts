/**
 * What the service needs from a chat platform. The simulator and the Evolution API provider
 * implement it; dispatch, segments and channels only ever talk to this interface.
 */
export type ChannelStatus = "connecting" | "connected" | "disconnected";

export interface ProviderGroup {
  id_group: string;
  name: string;
}

export interface CarouselCard {
  image_url: string;
  text: string;
  buttons: { label: string; type: "URL"; url: string }[];
}

export type MessageContent =
  | { type: "text"; text: string }
  | { type: "image" | "video" | "audio" | "document"; mediaUrl: string; caption: string; fileName?: string }
  | { type: "carousel"; text: string; cards: CarouselCard[] };

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
}

export type ProviderEvent =
  | { type: "channel_status"; channelId: string; status: ChannelStatus; at: Date }
  | { type: "message_ack"; channelId: string; deliveryKey: string; messageId: string; at: Date }
  | { type: "message_read"; channelId: string; deliveryKey: string; messageId: string; at: Date };

/** The platform cannot answer now (offline channel, gateway down): callers answer 503 or retry. */
export class ProviderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProviderUnavailableError";
  }
}

/** The platform refused this one send; `transient` sends may succeed when retried. */
export class ProviderSendError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = "ProviderSendError";
  }
}

export interface MessagingProvider {
  readonly name: "simulator" | "evolution";
  readonly capabilities: ProviderCapabilities;
  /** Registers a new connection; it starts `connecting` until paired. Returns the provider's reference. */
  createChannel(channel: { id: string; name: string }): Promise<{ ref: string; status: ChannelStatus }>;
  getStatus(channelId: string): Promise<ChannelStatus>;
  /** Throws ProviderUnavailableError when the groups cannot be queried. */
  listGroups(channelId: string): Promise<ProviderGroup[]>;
  /** Throws ProviderSendError or ProviderUnavailableError. Idempotent per deliveryKey. */
  send(message: OutboundMessage): Promise<SendReceipt>;
  /** Reconciliation after a crash: was this delivery key already sent? */
  findSent(channelId: string, deliveryKey: string): Promise<SendReceipt | null>;
  /** Status changes, acks and read receipts. Returns an unsubscribe function. */
  subscribe(listener: (event: ProviderEvent) => Promise<void> | void): () => void;
}
