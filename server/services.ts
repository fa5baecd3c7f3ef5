import type { Db } from "../db/client";
import { serverDatabase } from "./database";
import { recordChannelStatus } from "./channels/record-channel-status";
import { ReceiptBuffer } from "./dispatch/record-receipt";
import { releaseAbandonedLeases } from "./dispatch/release-leases";
import { wakeDispatch } from "./dispatch/wake";
import { createProvider } from "./messaging";
import type { MessagingProvider } from "./messaging/provider";
import { SimulatorProvider } from "./messaging/simulator";

export interface Services {
  db: Db;
  provider: MessagingProvider;
}

const holder = globalThis as unknown as { __gcsServices?: Promise<Services> };

/** The composition root: the database, the provider, and the provider's events wired to the domain. */
export function getServices(): Promise<Services> {
  holder.__gcsServices ??= (async () => {
    const { db, driver } = await serverDatabase();
    // On PostgreSQL other processes may hold leases legitimately; on PGlite only a dead one can have.
    if (driver === "pglite") await releaseAbandonedLeases(db, new Date());
    const provider = createProvider(db);
    const receipts = new ReceiptBuffer(db);
    provider.subscribe(async (event) => {
      if (event.type === "channel_status") {
        await recordChannelStatus(db, event.channelId, event.status, event.at);
        if (event.status === "connected") wakeDispatch();
      } else {
        receipts.add(event.type === "message_ack" ? "ack" : "read", event.receipts, event.at);
      }
    });
    // Channels left mid-pairing by a restart pair now.
    if (provider instanceof SimulatorProvider) await provider.pairDue();
    return { db, provider };
  })().catch((err) => {
    holder.__gcsServices = undefined;
    throw err;
  });
  return holder.__gcsServices;
}
