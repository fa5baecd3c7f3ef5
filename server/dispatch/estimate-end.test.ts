import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import { describe, expect, it } from "vitest";
import { defaultSettings } from "../settings/defaults";
import { mergeSettings } from "../settings/get-settings";
import type { Settings } from "../settings/schema";
import { estimateEnd, type EtaCampaign, type EtaChannel } from "./estimate-end";

/** Brasília wall-clock time → instant. 2026-11-23 is a Monday. */
const at = (local: string) => fromZonedTime(`${local.replace(" ", "T")}:00`, "America/Sao_Paulo");
const settings = (over: unknown = {}): Settings => mergeSettings<Settings>(defaultSettings as Settings, over);
const paced = (min: number, max: number, perLoop = 1, over: Record<string, unknown> = {}) =>
  settings({ dispatch_rates: { min_dispatch_rate: min, max_dispatch_rate: max, dispatches_per_loop: perLoop }, ...over });

const campaign = (over: Partial<EtaCampaign> = {}): EtaCampaign => ({
  status: "sending",
  pauseReason: null,
  scheduledAt: null,
  nextRunAt: new Date(0),
  open: 20,
  finishedAt: null,
  ...over,
});
const channel = (over: Partial<EtaChannel> = {}): EtaChannel => ({ usable: true, availableFrom: null, leftToday: null, dailyCap: null, gapMs: 0, ...over });
const seconds = (from: Date, to: Date | null) => (to ? (to.getTime() - from.getTime()) / 1000 : null);

describe("estimateEnd", () => {
  const now = at("2026-11-23 10:00");

  it("paces the open groups at the mean of min and max per loop: 20 groups, 1 a loop, 2–4 s → 19 pauses of 3 s", () => {
    expect(seconds(now, estimateEnd(campaign(), paced(2, 4), [channel()], now))).toBe(57);
  });

  it("sends dispatches_per_loop per loop: 20 groups, 5 a loop, 10 s → 3 pauses", () => {
    expect(seconds(now, estimateEnd(campaign(), paced(10, 10, 5), [channel()], now))).toBe(30);
  });

  it("starts from the next loop's time, or scheduled_at", () => {
    const next = new Date(now.getTime() + 5000);
    expect(seconds(now, estimateEnd(campaign({ nextRunAt: next, open: 3 }), paced(1, 1), [channel()], now))).toBe(7);
    const when = at("2026-11-24 09:30");
    expect(estimateEnd(campaign({ status: "pending", scheduledAt: when, open: 1 }), paced(1, 1), [channel()], now)).toEqual(when);
  });

  it("is null when it cannot be known: paused by the user, by send errors, numbers offline, or every number blocked", () => {
    for (const pauseReason of ["user", "send_errors", "channel_offline"] as const) {
      expect(estimateEnd(campaign({ status: "paused", pauseReason }), paced(1, 1), [channel()], now)).toBeNull();
    }
    expect(estimateEnd(campaign(), paced(1, 1), [channel({ usable: false })], now)).toBeNull();
    expect(estimateEnd(campaign({ status: "canceled" }), paced(1, 1), [channel()], now)).toBeNull();
  });

  it("gives the end of a finished campaign, and now when nothing is left", () => {
    const done = at("2026-11-23 09:00");
    expect(estimateEnd(campaign({ status: "completed", finishedAt: done }), paced(1, 1), [channel()], now)).toEqual(done);
    expect(estimateEnd(campaign({ open: 0 }), paced(1, 1), [channel()], now)).toEqual(now);
  });

  it("waits for the next sending window when outside one, and pauses at the window's end", () => {
    const schedule = { sending_schedule: { enabled: true, days: { monday: { enabled: true, start: "08:00", end: "09:00", windows: [] } } } };
    // Pending before the window: starts at 08:00 (tuesday's default window, 08:00–20:00); 3 groups at 60 s → 08:02.
    const early = at("2026-11-24 06:00");
    expect(estimateEnd(campaign({ status: "pending", open: 3 }), paced(60, 60, 1, schedule), [channel()], early)).toEqual(at("2026-11-24 08:02"));
    // Monday 08:58 with 5 groups at 60 s: 08:58, 08:59 in the window, the rest from tuesday 08:00.
    const late = at("2026-11-23 08:58");
    expect(estimateEnd(campaign({ status: "paused", pauseReason: "schedule", open: 5 }), paced(60, 60, 1, schedule), [channel()], late)).toEqual(
      at("2026-11-24 08:02"),
    );
  });

  it("lets a sending campaign run past the window's end when finish_queued_on_end", () => {
    const schedule = {
      sending_schedule: { enabled: true, finish_queued_on_end: true, days: { monday: { enabled: true, start: "08:00", end: "09:00", windows: [] } } },
    };
    const late = at("2026-11-23 08:58");
    expect(estimateEnd(campaign({ open: 5 }), paced(60, 60, 1, schedule), [channel()], late)).toEqual(at("2026-11-23 09:02"));
  });

  it("holds to the numbers' daily caps: what is left today, then the cap per day from 00:00 in Brasília", () => {
    // Two numbers with 3 and 2 left today (cap 10 a day each), 30 groups at 1 s: 5 today, 20 tomorrow, 5 the day after.
    const chs = [channel({ leftToday: 3, dailyCap: 10 }), channel({ leftToday: 2, dailyCap: 10 })];
    expect(estimateEnd(campaign({ open: 30 }), paced(1, 1), chs, now)).toEqual(new Date(at("2026-11-25 00:00").getTime() + 4000));
    // A number without a cap lifts the limit.
    expect(seconds(now, estimateEnd(campaign({ open: 30 }), paced(1, 1), [...chs, channel()], now))).toBe(29);
  });

  it("waits for a cool-down to end, and is slowed by the numbers' least gap between sends", () => {
    const until = new Date(now.getTime() + 60_000);
    expect(seconds(now, estimateEnd(campaign({ open: 2 }), paced(1, 1), [channel({ availableFrom: until })], now))).toBe(61);
    // 4 a loop over two numbers with a 10 s gap: a loop every 20 s, not every 1 s.
    expect(seconds(now, estimateEnd(campaign({ open: 8 }), paced(1, 1, 4), [channel({ gapMs: 10_000 }), channel({ gapMs: 10_000 })], now))).toBe(20);
  });

  it("answers a 50,000-group campaign with windows and caps quickly", () => {
    const s = paced(1, 1, 1, { sending_schedule: { enabled: true } });
    const started = performance.now();
    const eta = estimateEnd(campaign({ status: "pending", open: 50_000 }), s, [channel({ leftToday: 1000, dailyCap: 1000 })], now);
    expect(eta).not.toBeNull();
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
