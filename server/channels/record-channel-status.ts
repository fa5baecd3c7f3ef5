import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";
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
  });
}
