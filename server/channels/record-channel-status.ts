import { and, eq, gt, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, channels } from "../../db/schema";
import type { ChannelStatus } from "../messaging/provider";
import { recordEvent } from "../outbox/record-event";

/** Applies a status reported by the provider; a real change also emits `channel_status`. */
export async function recordChannelStatus(db: Db, channelId: string, status: ChannelStatus, at: Date) {
  await db.transaction(async (tx) => {
    const [before] = await tx.select().from(channels).where(eq(channels.id, channelId)).for("update");
    if (!before || before.status === status) return;
    await tx
      .update(channels)
      .set({ status, updatedAt: at })
      .where(and(eq(channels.id, channelId), ne(channels.status, status)));
    await recordEvent(tx, before.tenantId, "channel_status", { id_channel: channelId, name: before.name, status, previous_status: before.status }, at);
    // A channel back online: the tenant's campaigns paused as `channel_offline` are due now (their
    // planner decides), not at the end of the pause's 30-second look-again.
    if (status === "connected") {
      await tx
        .update(campaigns)
        .set({ nextRunAt: at })
        .where(
          and(
            eq(campaigns.tenantId, before.tenantId),
            eq(campaigns.status, "paused"),
            eq(campaigns.pauseReason, "channel_offline"),
            gt(campaigns.nextRunAt, at),
          ),
        );
    }
  });
}
