import { describe, expect, it } from "vitest";
import { periodicJobs } from "./index";
import { cronEvery } from "./job";

describe("cronEvery", () => {
  it("is every minute under a minute (Inngest's finest), every n minutes up to an hour, every n hours beyond", () => {
    expect([5_000, 30_000, 60_000].map(cronEvery)).toEqual(["* * * * *", "* * * * *", "* * * * *"]);
    expect([120_000, 300_000, 59 * 60_000].map(cronEvery)).toEqual(["*/2 * * * *", "*/5 * * * *", "*/59 * * * *"]);
    expect([3_600_000, 2 * 3_600_000, 86_400_000].map(cronEvery)).toEqual(["0 * * * *", "0 */2 * * *", "0 0 * * *"]);
  });
});

describe("the periodic jobs' registry", () => {
  it("holds each job once, by id", () => {
    const ids = periodicJobs.map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(["channel-state-poll", "launch-funnel", "maintenance", "meta-events", "number-health-sweep", "series-runs"]);
  });
});
