import type { pauseReasons } from "../../db/schema";
import type { Settings } from "../settings/schema";
import type { Blocked } from "./claim-deliveries";
import { localDate, windowState } from "./sending-window";

/** What the planner needs to know about a campaign; the engine gathers it, the planner decides. */
export interface PlanCampaign {
  status: "pending" | "sending" | "paused" | "completed" | "failed" | "canceled";
  pauseReason: (typeof pauseReasons)[number] | null;
  scheduledAt: Date | null;
  /** Pacing: the earliest time of the next loop. */
  nextRunAt: Date;
  /** Deliveries neither sent nor failed. */
  pending: number;
  /** Pending deliveries that could be sent right now (channel connected, no retry delay, not in flight). */
  sendableNow: number;
  /**
   * Nothing left can be sent: every open delivery's channel is offline or stopped by its health, after
   * failover moved what it could (null: something can go, now or after a wait).
   */
  blocked: Blocked | null;
  /** Earliest retry time among pending deliveries waiting for one. */
  nextRetryAt: Date | null;
  /** Before it starts: when the queue lets it (null: free now). */
  queueFreeAt: Date | null;
}

export type Plan =
  | { kind: "idle" }
  | { kind: "wait"; until: Date; reason: "scheduled" | "window" | "queue" | "pacing" | "retry" | "in_flight" }
  /** `sendAt`: the pacing pause ends then, within the lead the engine started early by; the step waits for it before it claims. */
  | { kind: "send"; batchSize: number; sendAt?: Date }
  | { kind: "pause"; reason: "schedule" | "channel_offline" | "channel_limits"; until: Date | null }
  | { kind: "finish" }
  | { kind: "cancel"; reason: "outside_hours" };

const recheckMs = 1000;
/** A campaign nothing of which can be sent looks again this often (docs/dispatch.md#several-numbers-per-group). */
export const blockedRecheckMs = 30_000;

/**
 * The dispatch decision, pure: settings × campaign state × time → the next thing to do.
 * Every engine (Inngest, the in-process runner) calls this and only executes what it says.
 */
export function planNext(c: PlanCampaign, settings: Settings, now: Date, leadMs = 0): Plan {
  if (c.status === "completed" || c.status === "failed" || c.status === "canceled") return { kind: "idle" };
  if (c.status === "paused" && (c.pauseReason === "user" || c.pauseReason === "send_errors")) return { kind: "idle" };
  if (c.pending === 0) return { kind: "finish" };

  const schedule = settings.sending_schedule;
  const win = windowState(schedule, now);
  const later = (until: Date | undefined) => until ?? new Date(now.getTime() + 60 * 60_000);

  if (c.status === "pending") {
    if (c.scheduledAt && c.scheduledAt > now) return { kind: "wait", until: c.scheduledAt, reason: "scheduled" };
    if (!win.current) {
      const nextIsLaterDay = !win.next || localDate(win.next.start) !== localDate(now);
      if (schedule.cancel_outside_hours && (schedule.cancel_mode === "always" || nextIsLaterDay)) {
        return { kind: "cancel", reason: "outside_hours" };
      }
      return { kind: "wait", until: later(win.next?.start), reason: "window" };
    }
    if (c.queueFreeAt && c.queueFreeAt > now) return { kind: "wait", until: c.queueFreeAt, reason: "queue" };
    // Due, and none of its groups can go (their numbers all offline or stopped): paused with the reason, as a
    // started campaign is, rather than left `pending` and looked at every second.
    if (c.blocked) return blockedPlan(c, c.blocked, now);
    return sendOrWait(c, settings, now, true, leadMs);
  }

  // Started (sending, or paused by the schedule or an offline channel).
  if (!win.current) {
    const keepGoing =
      schedule.finish_queued_on_end &&
      c.pauseReason !== "schedule" &&
      (schedule.finish_queued_mode === "between_days" || (win.lastEnd !== undefined && localDate(win.lastEnd) === localDate(now)));
    if (!keepGoing) {
      return c.status === "paused" && c.pauseReason === "schedule"
        ? { kind: "wait", until: later(win.next?.start), reason: "window" }
        : { kind: "pause", reason: "schedule", until: later(win.next?.start) };
    }
  }
  if (c.blocked) return blockedPlan(c, c.blocked, now);
  return sendOrWait(c, settings, now, false, leadMs);
}

/**
 * Nothing of the campaign can be sent: paused with the reason (or, already paused for it, waiting). Looked at
 * again when a limit ends, and at least every 30 s (a channel reconnected or another that reaches the groups may
 * take them over: failover); a reconnect also wakes a campaign paused as channel_offline.
 */
function blockedPlan(c: PlanCampaign, blocked: Blocked, now: Date): Plan {
  const recheck = new Date(now.getTime() + blockedRecheckMs);
  const until = blocked.until && blocked.until < recheck ? blocked.until : recheck;
  return c.status === "paused" && c.pauseReason === blocked.reason
    ? { kind: "wait", until, reason: "in_flight" }
    : { kind: "pause", reason: blocked.reason, until };
}

function sendOrWait(c: PlanCampaign, settings: Settings, now: Date, starting: boolean, leadMs: number): Plan {
  if (c.sendableNow === 0) {
    if (c.nextRetryAt && c.nextRetryAt > now) return { kind: "wait", until: c.nextRetryAt, reason: "retry" };
    return { kind: "wait", until: new Date(now.getTime() + recheckMs), reason: "in_flight" };
  }
  const batchSize = settings.dispatch_rates.dispatches_per_loop;
  if (starting || c.status !== "sending" || c.nextRunAt <= now) return { kind: "send", batchSize };
  // Pacing: a step that started within `leadMs` of the pause's end sends at its end (it waits for it itself).
  if (c.nextRunAt.getTime() - now.getTime() <= leadMs) return { kind: "send", batchSize, sendAt: c.nextRunAt };
  return { kind: "wait", until: c.nextRunAt, reason: "pacing" };
}

/** A random pause in [min, max] seconds, in milliseconds (`random` in [0,1) passed in for tests). */
export function randomPauseMs(min: number, max: number, random: number) {
  return Math.round((min + (max - min) * random) * 1000);
}
