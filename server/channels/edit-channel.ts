import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";
import { NotFound } from "../errors";

export async function editChannel(db: Db, tenantId: string, channelId: string, name: string, now: Date) {
  const [row] = await db
    .update(channels)
    .set({ name, updatedAt: now })
    .where(and(eq(channels.id, channelId), eq(channels.tenantId, tenantId)))
    .returning();
  if (!row) throw new NotFound(`Channel ${channelId} not found.`);
  return row;
}
