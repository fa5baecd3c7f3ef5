import { describe, expect, it } from "vitest";
import { functions } from "../served";
import { periodicJobs } from "../jobs/index";
import { engines } from "./index";

describe("the engines' registry", () => {
  it("holds each engine once, and /api/inngest serves every engine's and periodic job's functions, each id once", () => {
    expect(engines.map((e) => e.id)).toEqual(["dispatch", "webhooks", "launches", "group-actions", "welcomes"]);
    const ids = functions.map((f) => f.id());
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...engines.flatMap((e) => e.functions.map((f) => f.id())), ...periodicJobs.map((j) => j.id)]);
    expect([...ids].sort()).toEqual(
      [
        "channel-state-poll",
        "deliver-webhook",
        "dispatch-campaign",
        "group-action-engine",
        "launch-engine",
        "launch-funnel",
        "maintenance",
        "meta-events",
        "number-health-sweep",
        "series-runs",
        "sweep-due-campaigns",
        "sweep-webhooks",
        "welcome-engine",
      ].sort(),
    );
  });
});
