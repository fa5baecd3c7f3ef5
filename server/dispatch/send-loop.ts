/**
 * A step's loop (the `send` plan): claim under the numbers' budgets, send through the provider, record what went
 * out and every failure in one place, and let the campaign go with the loop's sent mark when all went well.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type campaigns, deliveries } from "../../db/schema";
import {
  type MessagingProvider,
  ProviderOutcomeUnknownError,
  ProviderSendError,
  ProviderUnavailableError,
  type OutboundMessage,
  type SendOutcome,
} from "../messaging/provider";
import { recordRateLimited } from "../numbers/health";
import type { Settings } from "../settings/schema";
import { buildMessages } from "./build-message";
import type { CampaignLease, Released } from "./campaign-lease";
import type { ClaimBudget } from "./channel-budgets";
import { markClaimedCaps, markReachedCaps, settleChannelUsage, type UsageSettlement } from "./channel-usage";
import { moveNotInGroup } from "./failover";
import { claimDeliveries, type ClaimStart } from "./claim-deliveries";
import { autoPauseAfterFailures, recordFailure, recordSentMany, recordUnknown, releaseDelivery, releaseForReconcile } from "./record-delivery";
import { transition } from "./transition";

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

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Claimed = Awaited<ReturnType<typeof claimDeliveries>>[number];

/** What every part of a loop works with. */
export interface LoopContext {
  deps: DispatchDeps;
  c: typeof campaigns.$inferSelect;
  settings: Settings;
  clock: () => Date;
  lease: CampaignLease;
  /** The numbers' budgets the claims enforce. */
  budget: ClaimBudget;
}

export interface LoopResult {
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
export async function sendBatch(
  loop: LoopContext,
  size: number,
  pauseMs: number,
  sendAt: Date | undefined,
  start: ClaimStart | undefined,
): Promise<LoopResult> {
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
    outcomes.push(...(await provider.sendMany(buildMessages(c, first, settings), options)));
    const o = outcomes[0];
    if (o.ok) forwardOf = { groupId: first[0].groupId, messageId: o.receipt.messageId };
  }
  outcomes.push(...(await provider.sendMany(buildMessages(c, batch.slice(first.length), settings, forwardOf), options)));

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
  try {
    const autoPaused = await recordFailures(loop, batch, outcomes, usage, now);
    return { sent: sent.length, autoPaused, answeredAt: now };
  } finally {
    await settleChannelUsage(db, loop.budget.day, usage);
  }
}

/**
 * Every failure of a loop, recorded in one place: a provider unavailable or a rate limit gives the group back
 * (no attempt used; a rate limit cools its number), an unknown outcome waits for reconciliation, any other error
 * uses an attempt. Sends that did not go out are refunded from their number's day (`usage`). True when the
 * failures in a row reached autoPauseAfterFailures and the campaign was paused.
 */
async function recordFailures(loop: LoopContext, batch: Claimed[], outcomes: SendOutcome[], usage: UsageSettlement, now: Date): Promise<boolean> {
  const { deps, c } = loop;
  const { db, provider } = deps;
  const refund = (channelId: string) => usage.refunds.set(channelId, (usage.refunds.get(channelId) ?? 0) + 1);
  const cooled = new Set<string>();
  for (const [i, d] of batch.entries()) {
    const o = outcomes[i];
    if (o.ok) continue;
    if (o.error instanceof ProviderUnavailableError) {
      await releaseDelivery(db, d.id, now, o.error.retryAfterMs);
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
    if (o.error instanceof ProviderSendError && o.error.notInGroup) {
      // Not in the group: this number no longer reaches it, and the delivery (not sent) goes to one that does.
      if (await moveNotInGroup(db, d, o.error.message, now)) {
        refund(d.channelId);
        continue;
      }
      // No other channel reaches the group: it fails (not retried: the number is not in it).
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
      await transition(db, c.id, ["sending"], "paused", now, { pauseReason: "send_errors" }, "system");
      return true;
    }
  }
  return false;
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
