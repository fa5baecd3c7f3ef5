import { describe, expect, it } from "vitest";
import { GatewayClock, offsetWindowMs } from "./gateway-clock";

/** Evolution's `date_time` for a moment, on a gateway 3 h behind UTC (São Paulo), labelled Z. */
const stamp = (t: number) => new Date(t - 3 * 3_600_000).toISOString();

describe("the gateway's time of an event on our clock", () => {
  it("places a resend at the time the gateway first emitted it, never later than it arrived", () => {
    const clock = new GatewayClock();
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0);
    // A first delivery (20 ms on the way) teaches the offset.
    expect(clock.timeOf(stamp(t0), new Date(t0 + 20)).getTime()).toBe(t0 + 20);
    // A leave at t0 + 1 s arrives faster (10 ms: the smaller offset is kept); the join emitted at t0 + 0.5 s
    // comes again 5 s later: placed before the leave.
    expect(clock.timeOf(stamp(t0 + 1000), new Date(t0 + 1010)).getTime()).toBe(t0 + 1010);
    expect(clock.timeOf(stamp(t0 + 500), new Date(t0 + 6000)).getTime()).toBe(t0 + 510);
    // No date_time: when it arrived.
    expect(clock.timeOf(undefined, new Date(t0 + 7000)).getTime()).toBe(t0 + 7000);
  });

  it("a first look at a resend alone places it when it arrived; the offset is learned again after two windows", () => {
    const clock = new GatewayClock();
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0);
    expect(clock.timeOf(stamp(t0), new Date(t0 + 60_000)).getTime()).toBe(t0 + 60_000);
    const later = t0 + 2 * offsetWindowMs + 1;
    // The gateway's zone moved an hour: learned once the older windows are gone.
    clock.observe(new Date(later - 2 * 3_600_000).toISOString(), new Date(later));
    clock.observe(new Date(later + offsetWindowMs - 2 * 3_600_000).toISOString(), new Date(later + offsetWindowMs));
    const t = later + 2 * offsetWindowMs + 5;
    clock.observe(new Date(t - 2 * 3_600_000).toISOString(), new Date(t));
    expect(clock.timeOf(new Date(t + 10 - 2 * 3_600_000).toISOString(), new Date(t + 10)).getTime()).toBe(t + 10);
  });
});
