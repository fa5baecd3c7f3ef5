/**
 * When a campaign should end (info-campaign's `eta`; docs/dispatch.md#eta), pure: its groups still open, paced at the
 * mean of min/max_dispatch_rate per dispatches_per_loop, held to the sending windows and to what its numbers' daily
 * caps leave, from the time its next loop may start. Null when it cannot be known: paused by the user, by send
 * errors or with its numbers offline, or no number of it can send.
 */
import type { Settings } from "../settings/schema";
import { brasiliaDay, nextBrasiliaMidnight } from "../numbers/budget";
import type { PlanCampaign } from "./plan-next";
import { type Window, windowState } from "./sending-window";

export interface EtaChannel {
  /** Connected, and sending or in a limit that ends by itself (cooling, capped). */
  usable: boolean;
  /** When a cool-down or cap ends (null: sends now). */
  availableFrom: Date | null;
  /** Sends its cap leaves today (null: no cap). */
  leftToday: number | null;
  /** Its cap on the following days (null: none). */
  dailyCap: number | null;
  /** min_send_gap_seconds in ms. */
  gapMs: number;
}

export interface EtaCampaign extends Pick<PlanCampaign, "status" | "pauseReason" | "scheduledAt" | "nextRunAt"> {
  /** Deliveries neither sent nor failed (the monitoring copy included). */
  open: number;
  finishedAt: Date | null;
}

/** A year ahead: past it (a schedule with no window, a cap of 0) the end is not known. */
const horizonMs = 366 * 86_400_000;

/** `settings` may be null for a campaign that is finished, canceled or paused for good: nothing is paced then. */
export function estimateEnd(c: EtaCampaign, settings: Settings | null, channels: EtaChannel[], now: Date): Date | null {
  if (c.status === "completed" || c.status === "failed") return c.finishedAt;
  if (c.status === "canceled") return null;
  if (c.status === "paused" && c.pauseReason !== "schedule" && c.pauseReason !== "channel_limits") return null;
  if (c.open <= 0) return now;
  if (!settings) return null;
  const usable = channels.filter((ch) => ch.usable);
  if (usable.length === 0) return null;

  const rates = settings.dispatch_rates;
  const perLoop = rates.dispatches_per_loop;
  // A loop of perLoop sends spread over the numbers cannot beat their least gap between sends.
  const numberGapMs = Math.max(...usable.map((ch) => ch.gapMs));
  const loopGapMs = Math.max(((rates.min_dispatch_rate + rates.max_dispatch_rate) / 2) * 1000, (Math.ceil(perLoop / usable.length) * numberGapMs) | 0);
  const sum = (values: (number | null)[]) => (values.some((v) => v === null) ? Number.POSITIVE_INFINITY : values.reduce<number>((a, v) => a + (v ?? 0), 0));
  const capToday = sum(usable.map((ch) => ch.leftToday));
  const capPerDay = sum(usable.map((ch) => ch.dailyCap));
  const capped = Number.isFinite(capToday) || Number.isFinite(capPerDay);

  const schedule = settings.sending_schedule;
  // A campaign already sending when its window closes runs to its end when finish_queued_on_end says so.
  const started = c.status === "sending" || (c.status === "paused" && c.pauseReason !== "schedule");
  const windowsApply = schedule.enabled && !(started && schedule.finish_queued_on_end);

  const soonest = Math.min(...usable.map((ch) => ch.availableFrom?.getTime() ?? now.getTime()));
  let t = Math.max(now.getTime(), c.nextRunAt.getTime(), c.scheduledAt?.getTime() ?? 0, soonest);
  let left = c.open;
  let capDay = brasiliaDay(now);
  let cap = capToday;
  let win: Window | undefined;
  for (let guard = 0; left > 0; guard++) {
    if (guard > 10_000 || t - now.getTime() > horizonMs) return null;
    let spanEnd = Number.POSITIVE_INFINITY;
    if (windowsApply) {
      // One look at the schedule per window (it walks two weeks of days).
      if (!win || t < win.start.getTime() || t >= win.end.getTime()) {
        const w = windowState(schedule, new Date(t));
        if (!w.current) {
          if (!w.next) return null;
          win = w.next;
          t = w.next.start.getTime();
          continue;
        }
        win = w.current;
      }
      spanEnd = win.end.getTime();
    }
    if (capped) {
      const day = brasiliaDay(new Date(t));
      if (day !== capDay) {
        capDay = day;
        cap = capPerDay;
      }
      const midnight = nextBrasiliaMidnight(new Date(t)).getTime();
      if (cap <= 0) {
        t = midnight;
        continue;
      }
      spanEnd = Math.min(spanEnd, midnight);
    }
    // The loops that start before the span ends, and the sends they carry.
    const loopsFit = loopGapMs > 0 && Number.isFinite(spanEnd) ? Math.floor((spanEnd - t - 1) / loopGapMs) + 1 : Number.POSITIVE_INFINITY;
    const sends = Math.min(left, cap, loopsFit * perLoop);
    const loops = Math.ceil(sends / perLoop);
    left -= sends;
    cap -= sends;
    const lastLoopAt = t + (loops - 1) * loopGapMs;
    if (left <= 0) return new Date(lastLoopAt);
    t = lastLoopAt + loopGapMs;
  }
  return new Date(t);
}
