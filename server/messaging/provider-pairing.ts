/** A channel's connection to the platform and its pairing (MessagingProvider's pairing; provider.ts). */

export type ChannelStatus = "connecting" | "connected" | "disconnected";

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
