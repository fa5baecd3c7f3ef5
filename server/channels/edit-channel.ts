import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels, type ChannelLimits } from "../../db/schema";
import { NotFound } from "../errors";

/**
 * Renames a channel and, when `limits` is given, changes its own budget: a number replaces the tenant's value
 * for this channel, null goes back to it (the key is dropped), an absent field stays. The row is locked for the
 * read-merge-write, so two edits of different limits both survive.
 */
export async function editChannel(db: Db, tenantId: string, channelId: string, edit: { name: string; limits?: ChannelLimits }, now: Date) {
  return db.transaction(async (tx) => {
    const [before] = await tx
      .select({ limits: channels.limits })
      .from(channels)
      .where(and(eq(channels.id, channelId), eq(channels.tenantId, tenantId)))
      .for("update");
    if (!before) throw new NotFound(`Channel ${channelId} not found.`);
    const limits: ChannelLimits = { ...before.limits };
    for (const [field, value] of Object.entries(edit.limits ?? {}) as [keyof ChannelLimits, number | null | undefined][]) {
      if (value === null) delete limits[field];
      else if (value !== undefined) limits[field] = value;
    }
    const [row] = await tx.update(channels).set({ name: edit.name, limits, updatedAt: now }).where(eq(channels.id, channelId)).returning();
    return row;
  });
}
