import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { deliveries } from "../../db/schema";

/** An ack or read receipt from the platform, matched by the delivery key `<campaign>:<group>`. */
export async function recordReceipt(db: Db, kind: "ack" | "read", deliveryKey: string, at: Date) {
  const split = deliveryKey.lastIndexOf(":");
  if (split < 0) return;
  const campaignId = deliveryKey.slice(0, split);
  const groupId = deliveryKey.slice(split + 1);
  const column = kind === "ack" ? deliveries.ackedAt : deliveries.readAt;
  await db
    .update(deliveries)
    .set(kind === "ack" ? { ackedAt: at } : { readAt: at, ackedAt: sql`coalesce(${deliveries.ackedAt}, ${at})` })
    .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.groupId, groupId), isNull(column)));
}
