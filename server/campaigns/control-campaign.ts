import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import type { AuditWrite } from "../audit/audited";
import { campaigns, deliveries } from "../../db/schema";
import { recordStatusEvent } from "../dispatch/campaign-events";
import { addChannelCountSql } from "../dispatch/channel-counts";
import { Conflict } from "../errors";
import { transition } from "../dispatch/transition";
import { notifyCampaignCanceled, wakeDispatch } from "../dispatch/wake";
import { findCampaign } from "./find-campaign";

const refuse = (id: string, status: string, action: string) => new Conflict(`Campaign ${id} is ${status} and cannot be ${action}.`, "invalid_campaign_status");

/**
 * The campaign controls (a person's decision). Each moves the status, and writes `audit` (the caller's audit entry),
 * in one transaction; the engines are told after the commit, so the wake-up finds the new status.
 */
function control(db: Db, campaignId: string, audit: AuditWrite | undefined, change: (tx: Tx) => Promise<typeof campaigns.$inferSelect | null>) {
  return db.transaction(async (tx) => {
    const row = await change(tx);
    if (row) await audit?.(tx, campaignId);
    return row;
  });
}

/** Pauses until resumed by the user (a campaign paused by the schedule or a channel becomes user-paused). */
export async function pauseCampaign(db: Db, tenantId: string, campaignId: string, now: Date, audit?: AuditWrite) {
  const c = await findCampaign(db, tenantId, campaignId);
  if (c.status === "paused" && c.pauseReason === "user") return c;
  const row = await control(db, campaignId, audit, (tx) =>
    transition(tx, campaignId, ["pending", "sending", "paused"], "paused", now, { pauseReason: "user" }),
  );
  if (!row) throw refuse(campaignId, c.status, "paused");
  return row;
}

/** Resumes a paused campaign where it stopped (the failure streaks that auto-paused it are forgiven). */
export async function resumeCampaign(db: Db, tenantId: string, campaignId: string, now: Date, audit?: AuditWrite) {
  const c = await findCampaign(db, tenantId, campaignId);
  if (c.status !== "paused") throw refuse(campaignId, c.status, "resumed");
  const to = c.startedAt ? "sending" : "pending";
  const row = await control(db, campaignId, audit, async (tx) => {
    const moved = await transition(tx, campaignId, ["paused"], to, now, { nextRunAt: now });
    if (moved) await tx.update(campaigns).set({ failureStreaks: {} }).where(eq(campaigns.id, campaignId));
    return moved;
  });
  if (!row) throw refuse(campaignId, c.status, "resumed");
  wakeDispatch(campaignId, { tenantId, dueAt: now });
  return row;
}

export async function cancelCampaign(db: Db, tenantId: string, campaignId: string, now: Date, audit?: AuditWrite) {
  const c = await findCampaign(db, tenantId, campaignId);
  const row = await control(db, campaignId, audit, (tx) => transition(tx, campaignId, ["pending", "sending", "paused"], "canceled", now, { finishedAt: now }));
  if (!row) throw refuse(campaignId, c.status, "canceled");
  notifyCampaignCanceled(campaignId);
  return row;
}

/**
 * "Enviar novamente" (dashboard, a person's decision): one failed delivery — typically "outcome
 * unknown", which is never resent automatically — goes back to pending under the same delivery key.
 * A finished campaign reopens (`completed`/`failed` → `sending`, with campaign_status) to send it;
 * a canceled one cannot.
 */
export async function resendDelivery(db: Db, tenantId: string, campaignId: string, groupId: string, now: Date, audit?: AuditWrite) {
  const c = await findCampaign(db, tenantId, campaignId);
  if (c.status === "canceled") throw refuse(campaignId, c.status, "sent again");
  const row = await db.transaction(async (tx) => {
    const [d] = await tx
      .update(deliveries)
      .set({ state: "pending", attempts: 0, notBefore: null, leaseUntil: null, outcomeUnknownSince: null, lookups: 0, error: null, updatedAt: now })
      .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.groupId, groupId), eq(deliveries.state, "failed")))
      .returning({ isMonitoring: deliveries.isMonitoring, channelId: deliveries.channelId });
    if (!d) throw new Conflict(`Group ${groupId} of campaign ${campaignId} is not failed.`, "invalid_delivery_state");
    const finished = c.status === "completed" || c.status === "failed";
    const [updated] = await tx
      .update(campaigns)
      .set({
        ...(d.isMonitoring
          ? {}
          : { failed: sql`greatest(${campaigns.failed} - 1, 0)`, channelCounts: addChannelCountSql(sql`${campaigns.channelCounts}`, d.channelId, 0, 0, -1) }),
        ...(finished ? { status: "sending" as const, finishedAt: null, pauseReason: null, nextRunAt: now, updatedAt: now } : {}),
      })
      .where(eq(campaigns.id, campaignId))
      .returning();
    if (finished) await recordStatusEvent(tx, updated, c.status, now);
    await audit?.(tx, campaignId);
    return updated;
  });
  wakeDispatch(campaignId, { tenantId, dueAt: now });
  return row;
}
