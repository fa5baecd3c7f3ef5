import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { deliveries } from "../../db/schema";
import type { MessagingProvider } from "../messaging/provider";
import { recordSent, releaseDelivery } from "./record-delivery";

export const deliveryKey = (campaignId: string, groupId: string) => `${campaignId}:${groupId}`;

/**
 * Deliveries left `sending` by a worker that died: ask the provider whether the message went out
 * (by its delivery key) before anything is sent again.
 */
export async function reconcileInFlight(db: Db, provider: MessagingProvider, campaignId: string, now: Date) {
  const stale = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.state, "sending"), lt(deliveries.leaseUntil, now)));
  for (const d of stale) {
    const receipt = await provider.findSent(d.channelId, deliveryKey(campaignId, d.groupId)).catch(() => undefined);
    if (receipt === undefined) continue; // the provider cannot say now: leave it for the next step
    if (receipt) await recordSent(db, d, receipt.messageId, receipt.sentAt);
    else await releaseDelivery(db, d.id, now);
  }
  return stale.length;
}
