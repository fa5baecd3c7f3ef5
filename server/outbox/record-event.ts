import type { Db, Tx } from "../../db/client";
import { outboxEvents } from "../../db/schema";
import { wakeWebhooks } from "../webhooks/wake";

export type OutboxEventType = "campaign_status" | "campaign_progress" | "channel_status" | "group_activity";

/** Call inside the transaction of the change that causes the event: no event lost, none invented. */
export async function recordEvent(tx: Db | Tx, tenantId: string, type: OutboxEventType, data: Record<string, unknown>, at: Date) {
  await tx.insert(outboxEvents).values({ tenantId, type, payload: { type, timestamp: at.toISOString(), data }, createdAt: at });
  // The webhook engine looks a moment later (after the commit); it also polls, so nothing depends on this.
  wakeWebhooks();
}
