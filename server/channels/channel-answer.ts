import type { Db, Tx } from "../../db/client";
import type { channels } from "../../db/schema";
import { healthView, limitsView, tenantNumberHealth } from "../numbers/health-view";
import type { NumberHealth } from "../numbers/budget";
import type { ChannelObject } from "./schema";

type ChannelRow = typeof channels.$inferSelect;

/** A channel as list-channels, info-channel and edit-channel answer it (CONTRACT §7), at `now`. */
export function channelAnswer(row: ChannelRow, tenant: NumberHealth, now: Date): ChannelObject {
  return {
    id_channel: row.id,
    name: row.name,
    status: row.status,
    phone: row.phone,
    health: healthView(row, tenant, now),
    limits: limitsView(row.limits),
    created_at: row.createdAt.toISOString(),
  };
}

/** The channels' answers, reading the tenant's number_health once. */
export async function channelAnswers(db: Db | Tx, tenantId: string, rows: ChannelRow[], now: Date): Promise<ChannelObject[]> {
  const tenant = await tenantNumberHealth(db, tenantId);
  return rows.map((row) => channelAnswer(row, tenant, now));
}
