import { and, eq, gt, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { campaigns, channels } from "../../db/schema";
import type { ChannelStatus, NumberLossReason } from "../messaging/provider";
import { effectiveBudget, restingState } from "../numbers/budget";
import { changeChannel, healthOnStatus } from "../numbers/health";
import { tenantNumberHealth } from "../numbers/health-view";
import { samePhone } from "../phones/phone";

/** What the platform said beside a status: why it took the number off, and the number it is paired with. */
export interface StatusDetails {
  reason?: NumberLossReason;
  /** The platform's own words for the reason (kept as the health's reason). */
  detail?: string;
  /** The channel's own number (digits with country code), when the platform knows it. */
  phone?: string | null;
}

/**
 * Applies a status reported by the provider, with the number's health it implies (CONTRACT §7: a logout, a ban
 * or a restriction puts the number in that state; a new pairing clears it); a change of either emits one
 * `channel_status` carrying both.
 */
export async function recordChannelStatus(db: Db, channelId: string, status: ChannelStatus, at: Date, details: StatusDetails = {}) {
  await db.transaction(async (tx) => {
    const [before] = await tx.select().from(channels).where(eq(channels.id, channelId)).for("update");
    if (!before) return;
    // A first connection, or one with another number, is day 1 of the warm-up (changeChannel sets first_paired_at).
    const budget = effectiveBudget(await tenantNumberHealth(tx, before.tenantId), before.limits);
    const newNumber = details.phone != null && before.phone !== null && !samePhone(details.phone, before.phone);
    const pairedAt = newNumber ? at : (before.firstPairedAt ?? at);
    const health = healthOnStatus(before, status, details, restingState(budget, pairedAt, at));
    await changeChannel(tx, channelId, { status, health, phone: status === "connected" ? details.phone : undefined }, at);
    // A channel back online: the tenant's campaigns paused as `channel_offline` are due now (their
    // planner decides), not at the end of the pause's 30-second look-again.
    if (status === "connected" && before.status !== "connected") {
      await tx
        .update(campaigns)
        .set({ nextRunAt: at })
        .where(
          and(
            eq(campaigns.tenantId, before.tenantId),
            eq(campaigns.status, "paused"),
            inArray(campaigns.pauseReason, ["channel_offline", "channel_limits"]),
            gt(campaigns.nextRunAt, at),
          ),
        );
    }
  });
}
