import { eq, sql } from "drizzle-orm";
import { retryOnConnectionLoss } from "../../db/errors";
import { campaigns } from "../../db/schema";
import { savedSettingsSql, settingsFrom } from "../settings/get-settings";
import type { Settings } from "../settings/schema";
import { acquirePlaceholders, acquireStatement, CampaignLease, campaignLeaseMs, type Probed, type Released } from "./campaign-lease";
import { budgetChannelsSql, channelBudgets, type BudgetChannel } from "./channel-budgets";
import { deliveryOutlook, outlookOf, outlookProbe } from "./claim-deliveries";
import { moveStranded } from "./failover";
import { groupCounters } from "./group-counters";
import { blockedRecheckMs, planNext, randomPauseMs, type Plan } from "./plan-next";
import { reconcileInFlight, staleProbe } from "./reconcile";
import { queueFreeAt, queueProbe } from "./queue";
import { transition } from "./transition";
import { type DispatchDeps, sendBatch, sleep } from "./send-loop";

/** What a step reads in its lease statement (built once: acquireStatement): what the planner needs. */
const stepProbe = {
  ...outlookProbe(acquirePlaceholders.id, acquirePlaceholders.now),
  stale: staleProbe(acquirePlaceholders.id, acquirePlaceholders.now),
  ...queueProbe(acquirePlaceholders.now),
  // Qualified by hand: drizzle writes a RETURNING's columns unqualified, and tenant_settings has a tenant_id too.
  settings: savedSettingsSql(sql.raw(`"campaigns".tenant_id`)),
  // The tenant's numbers' own limits and first pairing: the claim's budgets (channel-budgets.ts).
  budgetChannels: budgetChannelsSql(sql.raw(`"campaigns".tenant_id`)),
};
const stepAcquire = acquireStatement("campaign_step_acquire", stepProbe);

export type { DispatchDeps };

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
 * One step of one campaign, the unit every engine runs: acquire (take the campaign's lease, reading what the
 * planner needs in the same statement), plan (reconcile sends left in flight, fail over, ask planNext), execute
 * (one function per plan kind), finish (let go, setting the next run). Safe to call from several workers at
 * once. The lease is short and renewed by a heartbeat while the step runs (campaign-lease.ts): a step that
 * loses it stops claiming and sending, and records nothing but the sends that went out.
 */
export async function runCampaignStep(deps: DispatchDeps, campaignId: string): Promise<StepOutcome> {
  const step = await acquire(deps, campaignId);
  if ("outcome" in step) return step.outcome;
  let plan: Plan = { kind: "idle" };
  let effect: Effect = nothing;
  try {
    const planned = await planStep(step);
    plan = planned.plan;
    effect = await execute(planned, plan);
  } finally {
    effect = { ...effect, released: await finish(step, effect) };
  }
  return outcome(step, plan, effect);
}

/** A step that holds its campaign: what every part of it works with. */
interface Step {
  deps: DispatchDeps;
  campaignId: string;
  clock: () => Date;
  random: () => number;
  /** When the step started (the planner's and the probe's moment). */
  now: Date;
  lease: CampaignLease;
  probe: StepProbe;
}

type StepProbe = Probed<typeof stepProbe>;

/** A step past its plan: the campaign as the plan saw it, and the tenant's settings. */
interface Planned extends Step {
  c: typeof campaigns.$inferSelect;
  settings: Settings;
  plan: Plan;
}

/** What executing a plan leaves for the release. */
interface Effect {
  /** The next run (null: none until something external happens). */
  next: Date | null;
  /** The next run ends a pacing pause. */
  pacing: boolean;
  sent: number;
  /** The next run when nothing of the campaign is left (the release reads the counters). */
  doneAt?: Date;
  /** The release, when the loop's sent mark already let the campaign go (or finish() did). */
  released?: Released | null;
}

const nothing: Effect = { next: null, pacing: false, sent: 0 };

/** Takes the lease (and the probe with it); a busy or deleted campaign ends the step at once. */
async function acquire(deps: DispatchDeps, campaignId: string): Promise<Step | { outcome: StepOutcome }> {
  const clock = deps.clock ?? (() => new Date());
  const now = clock();
  const acquired = await CampaignLease.acquire(deps.db, campaignId, clock, deps.leaseMs ?? campaignLeaseMs, stepAcquire);
  if (!acquired) {
    const [exists] = await deps.db.select({ id: campaigns.id }).from(campaigns).where(eq(campaigns.id, campaignId));
    return { outcome: { plan: exists ? "busy" : "gone", nextRunAt: exists ? new Date(now.getTime() + 1000) : null, pacing: false, sent: 0 } };
  }
  return { deps, campaignId, clock, random: deps.random ?? Math.random, now, lease: acquired.lease, probe: acquired.probe };
}

/**
 * Reconciles and fails over what needs it, then asks planNext. Reconciliation may move the counters and the
 * outlook, failover the outlook: then they are read again.
 */
async function planStep(step: Step): Promise<Planned> {
  const { deps, campaignId, now, lease, probe } = step;
  const { db, provider } = deps;
  const stale = probe.stale && (await reconcileInFlight(db, provider, campaignId, now)) > 0;
  // One of its numbers cannot send: its pending deliveries move to others that reach their groups (failover).
  const moved = probe.blocked && (await moveStranded(db, campaignId, now)) > 0;
  const c = stale ? (await db.select().from(campaigns).where(eq(campaigns.id, campaignId)))[0] : lease.campaign;
  const settings = settingsFrom(probe.settings);
  const { monitoringOpen, ...outlook } = stale || moved ? await deliveryOutlook(db, campaignId, now) : await outlookOf(db, campaignId, now, probe);
  const plan = planNext(
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
  return { ...step, c, settings, plan };
}

type PlanOf<K extends Plan["kind"]> = Extract<Plan, { kind: K }>;

/** One function per plan kind. */
const executors: { [K in Plan["kind"]]: (step: Planned, plan: PlanOf<K>) => Promise<Effect> } = {
  idle: async () => nothing,
  wait: async (_step, plan) => ({ ...nothing, next: plan.until, pacing: plan.reason === "pacing" }),
  pause: async ({ deps, campaignId, c, now }, plan) => {
    await transition(deps.db, campaignId, [c.status], "paused", now, { pauseReason: plan.reason }, "system");
    return { ...nothing, next: plan.until ?? new Date(now.getTime() + blockedRecheckMs) };
  },
  cancel: async ({ deps, campaignId, c, now }) => {
    await transition(deps.db, campaignId, [c.status], "canceled", now, { finishedAt: now }, "system");
    return nothing;
  },
  finish: async ({ deps, campaignId, c, now, settings, random }) => {
    // Segment groups only: every group failed is `failed`, even if the monitoring copy went out.
    const final = c.sent === 0 && c.failed > 0 ? "failed" : "completed";
    const rates = settings.dispatch_rates;
    const pause = randomPauseMs(rates.min_campaign_interval, rates.max_campaign_interval, random());
    await transition(deps.db, campaignId, [c.status], final, now, { finishedAt: now, queueReadyAt: new Date(now.getTime() + pause) }, "system");
    return nothing;
  },
  send: executeSend,
};

const execute = (step: Planned, plan: Plan) => (executors[plan.kind] as (step: Planned, plan: Plan) => Promise<Effect>)(step, plan);

/** One loop: claim, send, record; its next run after the pacing pause. */
async function executeSend(step: Planned, plan: PlanOf<"send">): Promise<Effect> {
  const { deps, c, settings, clock, lease, probe, random } = step;
  // Started early (within the lead): the pause ends first (but for the claim's time, claimAheadMs). A
  // pause or cancel meanwhile stops the claim.
  const early = plan.sendAt ? plan.sendAt.getTime() - claimAheadMs - clock().getTime() : 0;
  if (early > 0) await (deps.sleep ?? sleep)(early);
  const rates = settings.dispatch_rates;
  const pauseMs = randomPauseMs(rates.min_dispatch_rate, rates.max_dispatch_rate, random());
  // Not sending yet (its first loop, or its first after a pause): its claim moves it to `sending`.
  const start = c.status !== "sending" ? { from: [c.status] } : undefined;
  // The numbers' budgets in force when this loop's sends go out.
  const budget = channelBudgets(settings.number_health, probe.budgetChannels as BudgetChannel[] | null, plan.sendAt ?? clock());
  const result = await sendBatch({ deps, c, settings, clock, lease, budget }, plan.batchSize, pauseMs, plan.sendAt, start);
  // The loop's sent mark let the campaign go and set its next run (sendHeld).
  if (result.released) return { next: result.released.nextRunAt, pacing: true, sent: result.sent, released: result.released };
  if (result.autoPaused || lease.lost) return { ...nothing, sent: result.sent };
  // Counted from the provider's last answer: the loop's recording and the release do not lengthen the pause.
  // Nothing left (the release reads the counters): finish right away rather than after the pacing pause.
  return { next: new Date(result.answeredAt.getTime() + pauseMs), pacing: true, sent: result.sent, doneAt: clock() };
}

/**
 * Lets the campaign go, setting its next run, unless the loop's sent mark already did. Only the holder writes:
 * a step whose lease was taken over leaves the campaign to the new holder. Retried on a lost connection: a
 * lease left behind would hold the campaign until it expires.
 */
async function finish(step: Step, effect: Effect): Promise<Released | null> {
  if (effect.released) return effect.released;
  const { next, doneAt } = effect;
  return retryOnConnectionLoss(() => step.lease.release(next ? { nextRunAt: next, doneAt } : {}));
}

/** The step's answer to its engine: the status as released (or as read, when the lease was taken over). */
async function outcome(step: Step, plan: Plan, effect: Effect): Promise<StepOutcome> {
  const { released, pacing, sent } = effect;
  const next = released && effect.next ? released.nextRunAt : effect.next;
  const [final] = released ? [released] : await step.deps.db.select({ status: campaigns.status }).from(campaigns).where(eq(campaigns.id, step.campaignId));
  const active = final.status === "pending" || final.status === "sending" || (final.status === "paused" && next !== null);
  return { plan: plan.kind, status: final.status, nextRunAt: active ? next : null, pacing: active && next !== null && pacing, sent };
}

/**
 * A step that started early claims this long before its pause ends, so the claim's round trip (0.1 s and
 * more when hundreds of campaigns start at once) does not lengthen the pause either. A pause or cancel
 * made in these last milliseconds lets the claimed loop go out, as one made while a loop is sending does.
 */
const claimAheadMs = 200;
