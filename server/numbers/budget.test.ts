import { describe, expect, it } from "vitest";
import { dailyCap, dayOfLife, effectiveBudget, nextBrasiliaMidnight, warmupCap, type NumberHealth } from "./budget";

const tenant: NumberHealth = { daily_message_cap: null, warmup_days: 0, warmup_first_day_cap: 50, min_send_gap_seconds: 0, group_create_cap: 20 };

describe("a number's budget", () => {
  it("takes a channel's own limits over the tenant's, field by field (null keeps the tenant's)", () => {
    expect(effectiveBudget({ ...tenant, daily_message_cap: 500 }, { daily_message_cap: 5, warmup_days: null })).toEqual({
      ...tenant,
      daily_message_cap: 5,
    });
    expect(effectiveBudget(tenant, {})).toEqual(tenant);
  });

  it("counts the days of a number's life in Brasília days from its first pairing", () => {
    // 23:30 in Brasília (02:30Z next day) is still the pairing's day; 00:10 Brasília is day 2.
    const paired = new Date("2026-11-27T02:30:00Z");
    expect(dayOfLife(paired, new Date("2026-11-27T02:59:00Z"))).toBe(1);
    expect(dayOfLife(paired, new Date("2026-11-27T03:10:00Z"))).toBe(2);
    expect(dayOfLife(null, new Date())).toBeNull();
  });

  it("ramps the warm-up cap × 1.5 a day, rounded up each day, never above daily_message_cap", () => {
    expect([1, 2, 3, 4].map((d) => warmupCap(50, d))).toEqual([50, 75, 113, 170]);
    const paired = new Date("2026-11-01T15:00:00Z");
    const on = (day: number) => new Date(paired.getTime() + (day - 1) * 86_400_000);
    const warm = { ...tenant, warmup_days: 3 };
    expect(dailyCap(warm, paired, on(1))).toEqual({ cap: 50, warmupDay: 1 });
    expect(dailyCap(warm, paired, on(3))).toEqual({ cap: 113, warmupDay: 3 });
    expect(dailyCap(warm, paired, on(4))).toEqual({ cap: null, warmupDay: null });
    expect(dailyCap({ ...warm, daily_message_cap: 60 }, paired, on(2))).toEqual({ cap: 60, warmupDay: 2 });
    expect(dailyCap({ ...warm, daily_message_cap: 60 }, paired, on(9))).toEqual({ cap: 60, warmupDay: null });
  });

  it("ends a capped day at the next 00:00 in Brasília", () => {
    expect(nextBrasiliaMidnight(new Date("2026-11-27T02:30:00Z")).toISOString()).toBe("2026-11-27T03:00:00.000Z");
    expect(nextBrasiliaMidnight(new Date("2026-11-27T03:00:00Z")).toISOString()).toBe("2026-11-28T03:00:00.000Z");
  });
});
