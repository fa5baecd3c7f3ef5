import type { Db } from "../../db/client";
import { channelAnswers } from "../channels/channel-answer";
import { listChannels } from "../channels/list-channels";
import { brasiliaParts } from "../time/brasilia";
import { overviewCampaigns } from "./overview-campaigns";
import { launchesAlerting, overviewLaunches } from "./overview-launches";
import type { Overview, OverviewAttention } from "./schema";
import { sendsToday } from "./sends-today";
import { webhooksFailing } from "./webhooks-failing";

/** A number in one of these states needs someone to look (docs/numbers.md: the states and what to do). */
const troubledStates = new Set(["cooling", "capped", "restricted", "logged_out", "banned"]);

/** The dashboard's home (docs/dashboard.md#overview): everything of the tenant's day in one answer. */
export async function getOverview(db: Db, tenantId: string, now: Date): Promise<Overview> {
  const [campaigns, sends, channelRows, launches, webhooks, alerting] = await Promise.all([
    overviewCampaigns(db, tenantId, now),
    sendsToday(db, tenantId, now),
    listChannels(db, tenantId),
    overviewLaunches(db, tenantId, now),
    webhooksFailing(db, tenantId, now),
    launchesAlerting(db, tenantId, now),
  ]);
  const answers = await channelAnswers(db, tenantId, channelRows, now);
  const numbers = answers.map((c) => ({
    id_channel: c.id_channel,
    name: c.name,
    phone: c.phone,
    status: c.status,
    health_state: c.health.state,
    health_reason: c.health.reason,
    health_until: c.health.until,
    sent_today: c.health.sent_today,
    daily_cap: c.health.daily_cap,
  }));
  const attention: OverviewAttention[] = [];
  for (const c of answers) {
    const about = { id: c.id_channel, name: c.name, count: 1 };
    // A number taken off is also offline: its own line says why and what to do, once.
    if (troubledStates.has(c.health.state)) attention.push({ kind: "number", ...about, state: c.health.state, detail: c.health.reason, since: c.health.since });
    else if (c.status === "disconnected") attention.push({ kind: "channel_offline", ...about, state: c.status, detail: null, since: null });
  }
  for (const c of campaigns.active) {
    if (c.status === "paused") {
      attention.push({ kind: "campaign_paused", id: c.id_campaign, name: c.name, state: c.pause_reason ?? "user", detail: null, count: 1, since: null });
    }
  }
  attention.push(...webhooks, ...alerting);
  return {
    generated_at: now.toISOString(),
    today: brasiliaParts(now).date,
    campaigns,
    sends_today: sends,
    numbers,
    launches,
    attention,
  };
}
