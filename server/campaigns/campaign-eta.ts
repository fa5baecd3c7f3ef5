import { inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";
import { estimateEnd, type EtaCampaign, type EtaChannel } from "../dispatch/estimate-end";
import { effectiveBudget } from "../numbers/budget";
import { healthView } from "../numbers/health-view";
import { sendingStates, timedStates } from "../numbers/health";
import { getSettings } from "../settings/get-settings";

/**
 * info-campaign's `eta` (docs/dispatch.md#eta): the pure estimateEnd over the tenant's settings and the campaign's
 * numbers as they stand (connected, health, what their caps leave today). A finished or stopped campaign needs no
 * look at either.
 */
export async function campaignEta(db: Db, tenantId: string, c: EtaCampaign & { channelIds: string[] }, now: Date): Promise<Date | null> {
  // Nothing to look up: estimateEnd answers these from the campaign alone.
  if (c.status !== "pending" && c.status !== "sending" && !(c.status === "paused" && resumesByItself(c))) return estimateEnd(c, null, [], now);
  const settings = await getSettings(db, tenantId);
  const rows = c.channelIds.length ? await db.select().from(channels).where(inArray(channels.id, c.channelIds)) : [];
  const numbers: EtaChannel[] = rows.map((row) => {
    const health = healthView(row, settings.number_health, now);
    const until = row.healthUntil && row.healthUntil > now ? row.healthUntil : null;
    const timed = timedStates.includes(row.healthState);
    return {
      usable: row.status === "connected" && (sendingStates.includes(row.healthState) || timed),
      availableFrom: timed ? until : null,
      leftToday: health.daily_cap === null ? null : Math.max(0, health.daily_cap - health.sent_today),
      dailyCap: health.daily_cap,
      gapMs: Math.round(effectiveBudget(settings.number_health, row.limits).min_send_gap_seconds * 1000),
    };
  });
  return estimateEnd(c, settings, numbers, now);
}

const resumesByItself = (c: EtaCampaign) => c.pauseReason === "schedule" || c.pauseReason === "channel_limits";
