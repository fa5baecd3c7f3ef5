import { and, eq } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { channels } from "../../db/schema";
import { NotFound } from "../errors";

/** A channel of this tenant; another tenant's channel is as unknown as a missing one. */
export async function findChannel(db: Db | Tx, tenantId: string, channelId: string) {
  const [row] = await db
    .select()
    .from(channels)
    .where(and(eq(channels.id, channelId), eq(channels.tenantId, tenantId)));
  if (!row) throw new NotFound(`Channel ${channelId} not found.`);
  return row;
}
