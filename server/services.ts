import type { Db } from "../db/client";
import { serverDatabase } from "./database";
import { processSlot } from "./process-state";
import { recordChannelStatus } from "./channels/record-channel-status";
import { ReceiptBuffer } from "./dispatch/record-receipt";
import { recordSentFromEvent } from "./dispatch/reconcile";
import { releaseAbandonedLeases } from "./dispatch/release-leases";
import { wakeDispatch } from "./dispatch/wake";
import { forgetGroupAdmins } from "./groups/members/group-admins";
import { recordParticipants } from "./groups/members/record-participants";
import { moderateJoins } from "./moderation/moderate-joins";
import { moderateMessage } from "./moderation/moderate-messages";
import { wakeGroupAction } from "./groups/actions/wake";
import { recordPollVotes } from "./campaigns/record-poll-votes";
import { createProvider } from "./messaging";
import type { MessagingProvider } from "./messaging/provider";
import { SimulatorProvider } from "./messaging/simulator";

export interface Services {
  db: Db;
  provider: MessagingProvider;
}

const services = processSlot<Promise<Services>>("services");

/** The composition root: the database, the provider, and the provider's events wired to the domain. */
export function getServices(): Promise<Services> {
  const existing = services.get();
  if (existing) return existing;
  const opening = (async () => {
    const { db, driver } = await serverDatabase();
    // On PostgreSQL other processes may hold leases legitimately; on PGlite only a dead one can have.
    if (driver === "pglite") await releaseAbandonedLeases(db, new Date());
    const provider = createProvider(db);
    const receipts = new ReceiptBuffer(db);
    provider.subscribe(async (event) => {
      if (event.type === "channel_status") {
        // A connection tells the channel's number (the warm-up's day 1; another number starts it again).
        const phone = event.status === "connected" ? await provider.ownNumber(event.channelId).catch(() => null) : undefined;
        await recordChannelStatus(db, event.channelId, event.status, event.at, { reason: event.reason, detail: event.detail, phone });
        if (event.status === "connected") wakeDispatch();
      } else if (event.type === "message_sent") {
        await recordSentFromEvent(db, event.receipts, event.at);
      } else if (event.type === "group_participants") {
        await recordParticipants(db, provider, event);
        // Moderation at join (server/moderation/moderate-joins.ts): after the join is recorded, decided once per join.
        if (event.action === "join") for (const id of await moderateJoins(db, event, new Date())) wakeGroupAction(id);
      } else if (event.type === "group_admins") {
        // Moderation exempts a group's admins (server/groups/members/group-admins.ts): read again at the next message.
        forgetGroupAdmins(event.groupId);
      } else if (event.type === "group_message") {
        // Moderation of members' messages (server/moderation/moderate-messages.ts): recorded and judged once per message.
        for (const id of await moderateMessage(db, provider, event, new Date())) wakeGroupAction(id);
      } else if (event.type === "poll_votes") {
        await recordPollVotes(db, event, new Date());
      } else {
        receipts.add(event.type === "message_ack" ? "ack" : "read", event.receipts, event.at);
      }
    });
    // Channels left mid-pairing by a restart pair now.
    if (provider instanceof SimulatorProvider) await provider.pairDue();
    return { db, provider };
  })().catch((err) => {
    services.set(undefined);
    throw err;
  });
  services.set(opening);
  return opening;
}
