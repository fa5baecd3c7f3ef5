import { eq } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { campaigns } from "../../db/schema";
import { recordEvent } from "../outbox/record-event";
import { groupCounters } from "./group-counters";

type CampaignRow = typeof campaigns.$inferSelect;

/** campaign_status, in the transaction that changed the status. */
export async function recordStatusEvent(tx: Tx, c: CampaignRow, previous: string, at: Date) {
  await recordEvent(
    tx,
    c.tenantId,
    "campaign_status",
    { id_campaign: c.id, name: c.name, status: c.status, previous_status: previous, groups: groupCounters(c) },
    at,
  );
}

/** campaign_progress at most once a second per campaign (`force` for the last one). */
export async function recordProgressEvent(tx: Tx, c: CampaignRow, at: Date, force = false) {
  if (!force && c.lastProgressAt && at.getTime() - c.lastProgressAt.getTime() < 1000) return;
  await tx.update(campaigns).set({ lastProgressAt: at }).where(eq(campaigns.id, c.id));
  await recordEvent(tx, c.tenantId, "campaign_progress", { id_campaign: c.id, name: c.name, status: c.status, groups: groupCounters(c) }, at);
}
