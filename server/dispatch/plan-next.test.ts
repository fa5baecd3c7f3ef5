import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import { describe, expect, it } from "vitest";
import { defaultSettings } from "../settings/defaults";
import { mergeSettings } from "../settings/get-settings";
import type { Settings } from "../settings/schema";
import { planNext, randomPauseMs, type PlanCampaign } from "./plan-next";
import { windowState } from "./sending-window";

/** Brasília wall-clock time → instant. 2026-11-23 is a Monday. */
const at = (local: string) => fromZonedTime(`${local.replace(" ", "T")}:00`, "America/Sao_Paulo");

const settings = (over: unknown = {}): Settings => mergeSettings<Settings>(defaultSettings as Settings, over);
const scheduled = (over: Record<string, unknown> = {}) => settings({ sending_schedule: { enabled: true, ...over } });

const campaign = (over: Partial<PlanCampaign> = {}): PlanCampaign => ({
  status: "pending",
  pauseReason: null,
  scheduledAt: null,
  nextRunAt: new Date(0),
  pending: 10,
  sendableNow: 10,
  blocked: null,
  nextRetryAt: null,
  queueFreeAt: null,
  ...over,
});

describe("planNext without a sending schedule", () => {
  it("starts a due campaign with a batch of dispatches_per_loop", () => {
    expect(planNext(campaign(), settings({ dispatch_rates: { dispatches_per_loop: 7 } }), at("2026-11-23 03:00"))).toEqual({ kind: "send", batchSize: 7 });
  });

  it("waits for scheduled_at", () => {
    const when = at("2026-11-24 09:30");
    expect(planNext(campaign({ scheduledAt: when }), settings(), at("2026-11-23 10:00"))).toEqual({ kind: "wait", until: when, reason: "scheduled" });
  });

  it("waits for the queue", () => {
    const free = at("2026-11-23 10:01");
    expect(planNext(campaign({ queueFreeAt: free }), settings(), at("2026-11-23 10:00"))).toEqual({ kind: "wait", until: free, reason: "queue" });
  });

  it("paces loops: waits until nextRunAt while sending, sends once it has passed", () => {
    const now = at("2026-11-23 10:00");
    const next = new Date(now.getTime() + 5000);
    expect(planNext(campaign({ status: "sending", nextRunAt: next }), settings(), now)).toEqual({ kind: "wait", until: next, reason: "pacing" });
    expect(planNext(campaign({ status: "sending", nextRunAt: now }), settings(), now)).toMatchObject({ kind: "send" });
  });

  it("with a lead, a step that starts within it sends at the pause's end, and one earlier still waits", () => {
    const now = at("2026-11-23 10:00");
    const soon = new Date(now.getTime() + 800);
    const later = new Date(now.getTime() + 1200);
    expect(planNext(campaign({ status: "sending", nextRunAt: soon }), settings(), now, 1000)).toEqual({ kind: "send", batchSize: 1, sendAt: soon });
    expect(planNext(campaign({ status: "sending", nextRunAt: later }), settings(), now, 1000)).toEqual({ kind: "wait", until: later, reason: "pacing" });
    // A campaign that has not started yet is not paced: it starts at once.
    expect(planNext(campaign({ nextRunAt: soon }), settings(), now, 1000)).toEqual({ kind: "send", batchSize: 1 });
  });

  it("finishes when nothing is pending; idles when paused by the user or finished", () => {
    const now = at("2026-11-23 10:00");
    expect(planNext(campaign({ status: "sending", pending: 0 }), settings(), now)).toEqual({ kind: "finish" });
    expect(planNext(campaign({ status: "paused", pauseReason: "user" }), settings(), now)).toEqual({ kind: "idle" });
    expect(planNext(campaign({ status: "paused", pauseReason: "send_errors" }), settings(), now)).toEqual({ kind: "idle" });
    for (const status of ["completed", "failed", "canceled"] as const) expect(planNext(campaign({ status }), settings(), now)).toEqual({ kind: "idle" });
  });

  it("pauses when every pending group's channel is offline, and resumes when one is back", () => {
    const now = at("2026-11-23 10:00");
    const offline = { reason: "channel_offline" as const, until: null };
    const recheck = new Date(now.getTime() + 30_000);
    expect(planNext(campaign({ status: "sending", blocked: offline }), settings(), now)).toEqual({ kind: "pause", reason: "channel_offline", until: recheck });
    expect(planNext(campaign({ status: "paused", pauseReason: "channel_offline", blocked: offline }), settings(), now)).toEqual({
      kind: "wait",
      until: recheck,
      reason: "in_flight",
    });
    expect(planNext(campaign({ status: "paused", pauseReason: "channel_offline" }), settings(), now)).toMatchObject({ kind: "send" });
  });

  it("pauses a due campaign that has not started when none of its groups can go, and starts it once one can", () => {
    const now = at("2026-11-23 10:00");
    const offline = { reason: "channel_offline" as const, until: null };
    const recheck = new Date(now.getTime() + 30_000);
    expect(planNext(campaign({ status: "pending", sendableNow: 0, blocked: offline }), settings(), now)).toEqual({
      kind: "pause",
      reason: "channel_offline",
      until: recheck,
    });
    // Not before its time, nor ahead of the queue: those waits come first.
    const when = at("2026-11-24 09:30");
    expect(planNext(campaign({ scheduledAt: when, blocked: offline }), settings(), now)).toEqual({ kind: "wait", until: when, reason: "scheduled" });
    expect(planNext(campaign({ status: "paused", pauseReason: "channel_offline", sendableNow: 3 }), settings(), now)).toMatchObject({ kind: "send" });
  });

  it("pauses as channel_limits when only capped or cooling numbers hold it, until the first limit ends (looked at every 30 s)", () => {
    const now = at("2026-11-23 10:00");
    const soon = new Date(now.getTime() + 10_000);
    const late = new Date(now.getTime() + 3_600_000);
    expect(planNext(campaign({ status: "sending", blocked: { reason: "channel_limits", until: soon } }), settings(), now)).toEqual({
      kind: "pause",
      reason: "channel_limits",
      until: soon,
    });
    expect(planNext(campaign({ status: "sending", blocked: { reason: "channel_limits", until: late } }), settings(), now)).toEqual({
      kind: "pause",
      reason: "channel_limits",
      until: new Date(now.getTime() + 30_000),
    });
    // Another reason now (a number went offline too): the pause says so.
    expect(
      planNext(campaign({ status: "paused", pauseReason: "channel_limits", blocked: { reason: "channel_offline", until: soon } }), settings(), now),
    ).toEqual({ kind: "pause", reason: "channel_offline", until: soon });
    expect(planNext(campaign({ status: "paused", pauseReason: "channel_limits" }), settings(), now)).toMatchObject({ kind: "send" });
  });

  it("waits for a retry when the only pending groups are backing off", () => {
    const now = at("2026-11-23 10:00");
    const retry = new Date(now.getTime() + 2000);
    expect(planNext(campaign({ status: "sending", sendableNow: 0, nextRetryAt: retry }), settings(), now)).toEqual({
      kind: "wait",
      until: retry,
      reason: "retry",
    });
  });
});

describe("planNext with the weekly sending schedule (Brasília time)", () => {
  it("waits for the window to open the same day", () => {
    expect(planNext(campaign(), scheduled(), at("2026-11-23 07:00"))).toEqual({ kind: "wait", until: at("2026-11-23 08:00"), reason: "window" });
  });

  it("sends inside the window", () => {
    expect(planNext(campaign(), scheduled(), at("2026-11-23 08:00"))).toMatchObject({ kind: "send" });
    expect(planNext(campaign(), scheduled(), at("2026-11-23 19:59"))).toMatchObject({ kind: "send" });
  });

  it("cancel_outside_hours between_days cancels only when the next window is on a later day", () => {
    const s = scheduled({ cancel_outside_hours: true, cancel_mode: "between_days" });
    expect(planNext(campaign(), s, at("2026-11-23 21:00"))).toEqual({ kind: "cancel", reason: "outside_hours" });
    expect(planNext(campaign(), s, at("2026-11-23 07:00"))).toEqual({ kind: "wait", until: at("2026-11-23 08:00"), reason: "window" });
  });

  it("cancel_outside_hours always cancels any start outside the windows", () => {
    const s = scheduled({ cancel_outside_hours: true, cancel_mode: "always" });
    expect(planNext(campaign(), s, at("2026-11-23 07:00"))).toEqual({ kind: "cancel", reason: "outside_hours" });
  });

  it("without cancel_outside_hours a late start waits for the next day's window", () => {
    expect(planNext(campaign(), scheduled(), at("2026-11-23 21:00"))).toEqual({ kind: "wait", until: at("2026-11-24 08:00"), reason: "window" });
  });

  it("skips disabled days", () => {
    const s = scheduled({ days: { sunday: { enabled: false } } });
    expect(planNext(campaign(), s, at("2026-11-21 21:00"))).toEqual({ kind: "wait", until: at("2026-11-23 08:00"), reason: "window" });
  });

  it("windows override the day's start and end", () => {
    const s = scheduled({
      days: {
        monday: {
          windows: [
            { start: "09:00", end: "12:00" },
            { start: "14:00", end: "18:00" },
          ],
        },
      },
    });
    expect(planNext(campaign(), s, at("2026-11-23 13:00"))).toEqual({ kind: "wait", until: at("2026-11-23 14:00"), reason: "window" });
    expect(planNext(campaign(), s, at("2026-11-23 10:00"))).toMatchObject({ kind: "send" });
    expect(planNext(campaign(), s, at("2026-11-23 08:30"))).toEqual({ kind: "wait", until: at("2026-11-23 09:00"), reason: "window" });
  });

  it("a schedule across midnight: Monday 20:00–23:59 then Tuesday 00:00–02:00", () => {
    const s = scheduled({
      days: {
        monday: { start: "20:00", end: "23:59" },
        tuesday: {
          windows: [
            { start: "00:00", end: "02:00" },
            { start: "20:00", end: "23:59" },
          ],
        },
      },
    });
    expect(planNext(campaign(), s, at("2026-11-23 23:30"))).toMatchObject({ kind: "send" });
    expect(planNext(campaign(), s, at("2026-11-24 00:30"))).toMatchObject({ kind: "send" });
    expect(planNext(campaign(), s, at("2026-11-24 03:00"))).toEqual({ kind: "wait", until: at("2026-11-24 20:00"), reason: "window" });
    expect(windowState(s.sending_schedule, at("2026-11-24 01:00")).current?.end).toEqual(at("2026-11-24 02:00"));
  });

  describe("a window closing mid-campaign (Monday 08:00–20:00)", () => {
    const sending = campaign({ status: "sending" });

    it("finish_queued_on_end + between_days runs to the end, past midnight", () => {
      const s = scheduled({ finish_queued_on_end: true, finish_queued_mode: "between_days" });
      expect(planNext(sending, s, at("2026-11-23 20:30"))).toMatchObject({ kind: "send" });
      expect(planNext(sending, s, at("2026-11-24 00:30"))).toMatchObject({ kind: "send" });
    });

    it("finish_queued_on_end + same_day runs until midnight, then pauses until the next window", () => {
      const s = scheduled({ finish_queued_on_end: true, finish_queued_mode: "same_day" });
      expect(planNext(sending, s, at("2026-11-23 23:59"))).toMatchObject({ kind: "send" });
      expect(planNext(sending, s, at("2026-11-24 00:01"))).toEqual({ kind: "pause", reason: "schedule", until: at("2026-11-24 08:00") });
    });

    it("without finish_queued_on_end it pauses at once until the next window, then resumes", () => {
      const s = scheduled({ finish_queued_on_end: false });
      expect(planNext(sending, s, at("2026-11-23 20:00"))).toEqual({ kind: "pause", reason: "schedule", until: at("2026-11-24 08:00") });
      const paused = campaign({ status: "paused", pauseReason: "schedule" });
      expect(planNext(paused, s, at("2026-11-24 07:00"))).toEqual({ kind: "wait", until: at("2026-11-24 08:00"), reason: "window" });
      expect(planNext(paused, s, at("2026-11-24 08:00"))).toMatchObject({ kind: "send" });
    });

    it("a campaign paused by the schedule stays paused outside the window even with finish_queued_on_end", () => {
      const s = scheduled({ finish_queued_on_end: true, finish_queued_mode: "between_days" });
      const paused = campaign({ status: "paused", pauseReason: "schedule" });
      expect(planNext(paused, s, at("2026-11-24 07:00"))).toMatchObject({ kind: "wait", reason: "window" });
    });
  });
});

describe("randomPauseMs", () => {
  it("stays within [min, max] seconds", () => {
    expect(randomPauseMs(5, 15, 0)).toBe(5000);
    expect(randomPauseMs(5, 15, 0.999999)).toBeLessThanOrEqual(15000);
    expect(randomPauseMs(0, 0, 0.5)).toBe(0);
  });
});
