import type { Db } from "../../db/client";
import type { AuditWrite } from "../audit/audited";
import { Unavailable } from "../errors";
import { ProviderUnavailableError, type MessagingProvider, type PairingOptions } from "../messaging/provider";
import { findChannel } from "./find-channel";

async function provided<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw new Unavailable(`The messaging platform cannot answer now: ${err.message}`);
    throw err;
  }
}

/** What the dashboard's pairing screen shows: the live QR code and/or pairing code (with its expiry) and the status. */
export async function channelPairing(db: Db, provider: MessagingProvider, tenantId: string, channelId: string, options: PairingOptions = {}) {
  const channel = await findChannel(db, tenantId, channelId);
  const info = await provided(() => provider.pairing(channel.id, options));
  return {
    provider: provider.name,
    status: info.status,
    qr_code: info.qrCode,
    pairing_code: info.pairingCode,
    pairing_code_expires_at: info.pairingCodeExpiresAt ? info.pairingCodeExpiresAt.toISOString() : null,
    pairing_code_pending: info.pairingCodePending ?? false,
    session_closed: info.sessionClosed ?? false,
    automatic: info.automatic,
  };
}

/** Logs the number out; the status change arrives through the provider's events (channel_status). */
export async function disconnectChannel(db: Db, provider: MessagingProvider, tenantId: string, channelId: string, audit?: AuditWrite) {
  const channel = await findChannel(db, tenantId, channelId);
  await provided(() => provider.disconnectChannel(channel.id));
  await audit?.(db, channel.id);
}
