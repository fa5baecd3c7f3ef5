import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { retryOnConnectionLoss } from "../../db/errors";
import { campaigns, deliveries } from "../../db/schema";
import { ProviderOutcomeUnknownError, ProviderUnavailableError, type MessagingProvider, type OutboundMessage, type SendOutcome } from "../messaging/provider";
import { savedSettingsSql, settingsFrom } from "../settings/get-settings";
import type { Settings } from "../settings/schema";
import { recordRateLimited } from "../numbers/health";
import { buildMessage } from "./build-message";
import { acquirePlaceholders, acquireStatement, CampaignLease, campaignLeaseMs, type Released } from "./campaign-lease";
import { budgetChannelsSql, channelBudgets, type BudgetChannel, type ClaimBudget } from "./channel-budgets";
import { markClaimedCaps, markReachedCaps, settleChannelUsage, type UsageSettlement } from "./channel-usage";
import { claimDeliveries, deliveryOutlook, outlookOf, outlookProbe, type ClaimStart } from "./claim-deliveries";
import { moveStranded } from "./failover";
import { groupCounters } from "./group-counters";
import { blockedRecheckMs, planNext, randomPauseMs, type Plan } from "./plan-next";
import { autoPauseAfterFailures, recordFailure, recordSentMany, recordUnknown, releaseDelivery, releaseForReconcile } from "./record-delivery";
import { reconcileInFlight, staleProbe } from "./reconcile";
import { queueFreeAt, queueProbe } from "./queue";
import { transition } from "./transition";

/** A step's lease statement, which also reads what the planner needs (built once: acquireStatement). */
const stepAcquire = acquireStatement("campaign_step_acquire", {
  ...outlookProbe(acquirePlaceholders.id, acquirePlaceholders.now),
  stale: staleProbe(acquirePlaceholders.id, acquirePlaceholders.now),
  ...queueProbe(acquirePlaceholders.now),
  // Qualified by hand: drizzle writes a RETURNING's columns unqualified, and tenant_settings has a tenant_id too.
  settings: savedSettingsSql(sql.raw(`"campaigns".tenant_id`)),
  // The tenant's numbers' own limits and first pairing: the claim's budgets (channel-budgets.ts).
  budgetChannels: budgetChannelsSql(sql.raw(`"campaigns".tenant_id`)),
});

export interface DispatchDeps {
  db: Db;
  provider: MessagingProvider;
  clock?: () => Date;
  random?: () => number;
  /** The campaign lease (default campaignLeaseMs, 10 s); tests shorten it. */
  leaseMs?: number;
  /**
   * How early an engine may start a step that ends a pacing pause (default 0): the step takes the lease and
   * reads the campaign first, then waits for the pause's end itself, so that work does not lengthen the pause.
   */
  leadMs?: number;
  /** Waits out the rest of a pause (at most leadMs); an engine may lend the step's worker meanwhile. Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
}

export interface StepOutcome {
  plan: Plan["kind"] | "busy" | "gone";
  status?: string;
  /** When to run the next step; null: nothing to do until something external happens (resume, reconnect). */
  nextRunAt: Date | null;
  /** The next run ends a pacing pause: an engine with a lead (DispatchDeps.leadMs) may start it that early. */
  pacing: boolean;
  sent: number;
}

/**
 * One step of one campaign, the unit every engine runs: take the campaign's lease, reconcile sends
 * left in flight, ask planNext, do what it says, let go. Safe to call from several workers at once.
 * The lease is short and renewed by a heartbeat while the step runs (campaign-lease.ts): a step that
 * loses it stops claiming and sending, and records nothing but the sends that went out.
 */
export async function runCampaignStep(deps: DispatchDeps, campaignId: string): Promise<StepOutcome> {
  const clock = deps.clock ?? (() => new Date());
  const random = deps.random ?? Math.random;
  const { db, provider } = deps;
  const now = clock();
  // The lease's UPDATE also reads what the planner needs (one round trip): the tenant's settings, whether
  // anything is left to reconcile, and the deliveries' outlook.
  const acquired = await CampaignLease.acquire(db, campaignId, clock, deps.leaseMs ?? campaignLeaseMs, stepAcquire);
  if (!acquired) {
    const [exists] = await db.select({ id: campaigns.id }).from(campaigns).where(eq(campaigns.id, campaignId));
    return { plan: exists ? "busy" : "gone", nextRunAt: exists ? new Date(now.getTime() + 1000) : null, pacing: false, sent: 0 };
  }
  const { lease, probe } = acquired;
  let next: Date | null = null;
  let sent = 0;
  let plan: Plan = { kind: "idle" };
  let released: Released | null = null;
  /** The release done by the loop's sent mark, if it was. */
  let folded: Released | null = null;
  let doneAt: Date | undefined;
  let pacing = false;
  try {
    // Reconciliation may move the counters and the outlook: then both are read again.
    const stale = probe.stale && (await reconcileInFlight(db, provider, campaignId, now)) > 0;
    // One of its numbers cannot send: its pending deliveries move to others that reach their groups (failover).
    const moved = probe.blocked && (await moveStranded(db, campaignId, now)) > 0;
    const c = stale ? (await db.select().from(campaigns).where(eq(campaigns.id, campaignId)))[0] : lease.campaign;
    const settings = settingsFrom(probe.settings);
    const { monitoringOpen, ...outlook } = stale || moved ? await deliveryOutlook(db, campaignId, now) : await outlookOf(db, campaignId, now, probe);
    plan = planNext(
      {
        status: c.status,
        pauseReason: c.pauseReason,
        scheduledAt: c.scheduledAt,
        nextRunAt: c.nextRunAt,
        // The segment's groups left (the counters), plus the monitoring copy while it is open.
        pending: groupCounters(c).pending + (monitoringOpen ? 1 : 0),
        ...outlook,
        queueFreeAt: c.status === "pending" ? queueFreeAt(probe, settings, now) : null,
      },
      settings,
      now,
      deps.leadMs,
    );
    const rates = settings.dispatch_rates;
    switch (plan.kind) {
      case "idle":
        break;
      case "wait":
        next = plan.until;
        pacing = plan.reason === "pacing";
        break;
      case "pause":
        await transition(db, campaignId, [c.status], "paused", now, { pauseReason: plan.reason });
        next = plan.until ?? new Date(now.getTime() + blockedRecheckMs);
        break;
      case "cancel":
        await transition(db, campaignId, [c.status], "canceled", now, { finishedAt: now });
        break;
      case "finish": {
        // Segment groups only: every group failed is `failed`, even if the monitoring copy went out.
        const final = c.sent === 0 && c.failed > 0 ? "failed" : "completed";
        const pause = randomPauseMs(rates.min_campaign_interval, rates.max_campaign_interval, random());
        await transition(db, campaignId, [c.status], final, now, { finishedAt: now, queueReadyAt: new Date(now.getTime() + pause) });
        break;
      }
      case "send": {
        // Started early (within the lead): the pause ends first (but for the claim's time, claimAheadMs). A
        // pause or cancel meanwhile stops the claim.
        const early = plan.sendAt ? plan.sendAt.getTime() - claimAheadMs - clock().getTime() : 0;
        if (early > 0) await (deps.sleep ?? sleep)(early);
        const pauseMs = randomPauseMs(rates.min_dispatch_rate, rates.max_dispatch_rate, random());
        // Not sending yet (its first loop, or its first after a pause): its claim moves it to `sending`.
        const start = c.status !== "sending" ? { from: [c.status] } : undefined;
        // The numbers' budgets in force when this loop's sends go out.
        const budget = channelBudgets(settings.number_health, probe.budgetChannels as BudgetChannel[] | null, plan.sendAt ?? clock());
        const result = await sendBatch({ deps, c, settings, clock, lease, budget }, plan.batchSize, pauseMs, plan.sendAt, start);
        sent = result.sent;
        if (result.released) {
          // The loop's sent mark let the campaign go and set its next run (sendHeld).
          folded = result.released;
          next = result.released.nextRunAt;
          pacing = true;
          break;
        }
        if (result.autoPaused || lease.lost) break;
        // Counted from the provider's last answer: the loop's recording and the release do not lengthen the pause.
        next = new Date(result.answeredAt.getTime() + pauseMs);
        pacing = true;
        // Nothing left (the release reads the counters): finish right away rather than after the pacing pause.
        doneAt = clock();
        break;
      }
    }
  } finally {
    // Only the holder writes: a step whose lease was taken over leaves the campaign to the new holder.
    // Retried on a lost connection: a lease left behind would hold the campaign until it expires.
    released = folded ?? (await retryOnConnectionLoss(() => lease.release(next ? { nextRunAt: next, doneAt } : {})));
  }
  if (released && next) next = released.nextRunAt;
  // The release returns the status; a step whose lease was taken over reads it.
  const [final] = released ? [released] : await db.select({ status: campaigns.status }).from(campaigns).where(eq(campaigns.id, campaignId));
  const active = final.status === "pending" || final.status === "sending" || (final.status === "paused" && next !== null);
  return { plan: plan.kind, status: final.status, nextRunAt: active ? next : null, pacing: active && next !== null && pacing, sent };
}

/**
 * A step that started early claims this long before its pause ends, so the claim's round trip (0.1 s and
 * more when hundreds of campaigns start at once) does not lengthen the pause either. A pause or cancel
 * made in these last milliseconds lets the claimed loop go out, as one made while a loop is sending does.
 */
const claimAheadMs = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Claimed = Awaited<ReturnType<typeof claimDeliveries>>[number];

/** What every part of a loop works with. */
interface LoopContext {
  deps: DispatchDeps;
  c: typeof campaigns.$inferSelect;
  settings: Settings;
  clock: () => Date;
  lease: CampaignLease;
  /** The numbers' budgets the claims enforce. */
  budget: ClaimBudget;
}

interface LoopResult {
  sent: number;
  autoPaused: boolean;
  answeredAt: Date;
  /** Set when the loop's sent mark also let the campaign go (its last send, all answered ok). */
  released?: Released | null;
}

/**
 * Claims and sends one loop. `pauseMs`: the pacing pause to follow it, so the loop's last sent mark can set
 * the next run and let the campaign go in the same statement.
 */
async function sendBatch(loop: LoopContext, size: number, pauseMs: number, sendAt: Date | undefined, start: ClaimStart | undefined): Promise<LoopResult> {
  const { deps, clock, lease } = loop;
  const none = () => ({ sent: 0, autoPaused: false, answeredAt: clock() });
  if (lease.lost) return none();
  const batch = await claim(loop, size, start);
  if (batch.length === 0) return none();
  // Claimed ahead of the pause's end: the rest of the pause, then the sends.
  const rest = sendAt ? sendAt.getTime() - clock().getTime() : 0;
  if (rest > 0) await (deps.sleep ?? sleep)(rest);
  // The monitoring copy alone is followed by the segment's groups: it does not let the campaign go.
  const result = await sendClaimed(loop, batch, batch.every((d) => d.isMonitoring) ? undefined : pauseMs);
  // The monitoring copy is claimed alone and sent (and recorded) before any segment group. It is not one
  // of the campaign's groups, so it takes no slot of dispatches_per_loop: once it is out, the same loop
  // goes on with the segment's groups (none are claimed while it is backing off for a retry).
  if (result.autoPaused || lease.lost || !batch.every((d) => d.isMonitoring)) return result;
  const groups = await claim(loop, size);
  if (groups.length === 0) return result;
  const more = await sendClaimed(loop, groups, pauseMs);
  return { ...more, sent: result.sent + more.sent };
}

/**
 * One claim under the numbers' budgets. A claim that brought a number to its cap marks it `capped` (its other
 * deliveries then fail over); one that took nothing with caps in force looks for numbers already at their cap
 * and not marked yet (the planner counted their rows as sendable).
 */
async function claim(loop: LoopContext, size: number, start?: ClaimStart) {
  const { deps, c, clock, lease, budget } = loop;
  const batch = await claimDeliveries(deps.db, c.id, size, clock(), lease, start, budget);
  const capped = batch[0]?.cappedChannels ?? [];
  if (capped.length > 0) await markClaimedCaps(deps.db, capped, clock());
  else if (batch.length === 0 && budget.limits.length > 0) await markReachedCaps(deps.db, budget, clock());
  return batch;
}

/**
 * Sends a claimed batch, its rows held by the lease (the heartbeat renews their claim with the campaign)
 * until they are recorded. When sending throws (the database connection lost mid-loop, say), the rows it
 * left in flight go to reconciliation at once instead of waiting out their claim: they are dropped from
 * the lease first, and the renewal under way is awaited, so no heartbeat puts their lease back after.
 */
async function sendClaimed(loop: LoopContext, batch: Claimed[], pauseMs: number | undefined): Promise<LoopResult> {
  const { lease } = loop;
  const ids = batch.map((d) => d.id);
  lease.hold(ids);
  try {
    return await sendHeld(loop, batch, pauseMs);
  } catch (err) {
    lease.drop(ids);
    await lease.settled();
    await releaseForReconcile(loop.deps.db, ids, loop.clock()).catch(() => {});
    throw err;
  } finally {
    lease.drop(ids);
  }
}

async function sendHeld(loop: LoopContext, batch: Claimed[], pauseMs: number | undefined): Promise<LoopResult> {
  const { deps, c, settings, clock, lease } = loop;
  const { db, provider } = deps;
  // The provider checks the signal before each message it sends: once the lease may be lost, nothing more goes out.
  const options = { signal: lease.signal };
  const forwarding = settings.preferences.forward_message_enabled && provider.capabilities.forward;
  let forwardOf = forwarding ? await firstSent(db, c.id) : undefined;
  // Forwarding needs one message out first; everything else goes in one provider call.
  const first = forwarding && !forwardOf ? batch.slice(0, 1) : [];
  const outcomes: SendOutcome[] = [];
  if (first.length) {
    outcomes.push(
      ...(await provider.sendMany(
        first.map((d) => buildMessage(c, d, settings)),
        options,
      )),
    );
    const o = outcomes[0];
    if (o.ok) forwardOf = { groupId: first[0].groupId, messageId: o.receipt.messageId };
  }
  outcomes.push(
    ...(await provider.sendMany(
      batch.slice(first.length).map((d) => buildMessage(c, d, settings, forwardOf)),
      options,
    )),
  );

  // The loop's last answer: the pacing pause counts from here.
  const now = clock();
  const sent = batch.flatMap((d, i) => {
    const o = outcomes[i];
    return o.ok ? [{ id: d.id, channelId: d.channelId, messageId: o.receipt.messageId }] : [];
  });
  // A number's least gap runs from the loop's last answer too (the claim moved it from the claim's time).
  const usage: UsageSettlement = { refunds: new Map(), nextSends: gapsAfter(loop.budget, batch, now) };
  // Every send answered ok (the common loop): nothing else to write, so the sent mark also lets the campaign
  // go, its next run `pauseMs` after the last answer, or now when no group is left.
  if (pauseMs !== undefined && sent.length === batch.length && !lease.lost) {
    const nextRunAt = new Date(now.getTime() + pauseMs);
    const released = await lease.releaseWith((token) => recordSentMany(db, c.id, sent, now, { token, nextRunAt, doneAt: now }));
    await settleChannelUsage(db, loop.budget.day, usage);
    return { sent: sent.length, autoPaused: false, answeredAt: now, released };
  }
  // What went out is recorded whoever holds the campaign now (only rows still `sending` move).
  await recordSentMany(db, c.id, sent, now);
  // The lease may be lost: another worker may own these rows by now, so nothing else is written. The
  // rest stay `sending` and the next holder reconciles them with the provider (never resent blindly).
  if (lease.lost) return { sent: sent.length, autoPaused: false, answeredAt: now };
  const refund = (channelId: string) => usage.refunds.set(channelId, (usage.refunds.get(channelId) ?? 0) + 1);
  const cooled = new Set<string>();
  try {
    for (const [i, d] of batch.entries()) {
      const o = outcomes[i];
      if (o.ok) continue;
      if (o.error instanceof ProviderUnavailableError) {
        await releaseDelivery(db, d.id, now);
        refund(d.channelId);
        continue;
      }
      if (!(o.error instanceof ProviderOutcomeUnknownError) && o.error.rateLimited) {
        // The platform told the number to slow down (CONTRACT §7): it cools (no sends through it until its
        // cool-down ends; its deliveries fail over to the segment's other numbers). The group loses no attempt:
        // it goes back to pending, as for an offline channel.
        // One signal per number and loop: the loop's other sends through it answered the same.
        if (!cooled.has(d.channelId)) await recordRateLimited(db, d.channelId, now, o.error.message.slice(0, 200));
        cooled.add(d.channelId);
        await releaseDelivery(db, d.id, now);
        refund(d.channelId);
        continue;
      }
      let streak: number;
      if (o.error instanceof ProviderOutcomeUnknownError) {
        // Maybe sent: never resent in this attempt; looked up (or settled by a platform event) later.
        streak = await recordUnknown(db, d, o.error.message, provider.reconcileAfterMs, now);
      } else {
        streak = await recordFailure(db, d, o.error.message, o.error.transient, now);
        refund(d.channelId);
      }
      if (streak >= autoPauseAfterFailures) {
        // A broken channel must not burn through every group: pause (the rest of this loop was already answered).
        await transition(db, c.id, ["sending"], "paused", now, { pauseReason: "send_errors" });
        return { sent: sent.length, autoPaused: true, answeredAt: now };
      }
    }
  } finally {
    await settleChannelUsage(db, loop.budget.day, usage);
  }
  return { sent: sent.length, autoPaused: false, answeredAt: now };
}

/** The channels of the batch that have a least gap between sends, each with its next send counted from `answeredAt`. */
function gapsAfter(budget: ClaimBudget, batch: Claimed[], answeredAt: Date) {
  const out = new Map<string, Date>();
  if (budget.limits.length === 0) return out;
  for (const d of batch) {
    const gap = budget.limits.find((l) => l.id === d.channelId)?.gapMs ?? 0;
    if (gap > 0) out.set(d.channelId, new Date(answeredAt.getTime() + gap));
  }
  return out;
}

async function firstSent(db: Db, campaignId: string): Promise<OutboundMessage["forwardOf"]> {
  const [d] = await db
    .select({ groupId: deliveries.groupId, messageId: deliveries.providerMessageId })
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.state, "sent")))
    .limit(1);
  return d?.messageId ? { groupId: d.groupId, messageId: d.messageId } : undefined;
}
