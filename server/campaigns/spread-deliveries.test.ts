import { describe, expect, it } from "vitest";
import { spreadQuotas, type ChoiceSet } from "./spread-deliveries";

const set = (choices: string[], groups: number, first = 0): ChoiceSet => ({ choices, groups, first });
/** Groups per channel over every set. */
const counts = (sets: ChoiceSet[]) => {
  const out: Record<string, number> = {};
  for (const q of spreadQuotas(sets)) out[q.c] = (out[q.c] ?? 0) + q.q;
  return out;
};

// Which group of a set takes which of its channels (in turn, by position) is the fan-out's INSERT: the public
// surface's test is test/api/several-numbers.test.ts ("16 groups…", "the first groups alternate…").
describe("spreadQuotas", () => {
  it("every group reachable by all: counts differ by at most one, the extra ones to the segment's first channels", () => {
    expect(counts([set(["a", "b", "c"], 7)])).toEqual({ a: 3, b: 2, c: 2 });
    expect(counts([set(["a", "b"], 11)])).toEqual({ a: 6, b: 5 });
  });

  it("groups only one number reaches are balanced by the shared ones (6 only a, 10 both: 8 and 8)", () => {
    const quotas = spreadQuotas([set(["a", "b"], 10, 6), set(["a"], 6, 0)]);
    expect(counts([set(["a", "b"], 10, 6), set(["a"], 6, 0)])).toEqual({ a: 8, b: 8 });
    expect(quotas.filter((q) => q.s.length === 1)).toEqual([{ s: ["a"], c: "a", q: 6, o: 0 }]);
  });

  it("the sets as the database gives them (a group none of whose channels can send keeps those that reach it)", () => {
    // 4 groups a and b reach, b cannot send: their set is [a]; 2 only b reaches: their set is [b] (they wait there).
    expect(counts([set(["a"], 4), set(["b"], 2, 4)])).toEqual({ a: 4, b: 2 });
  });

  it("levels by arithmetic, not per group: 100,000 groups over three sets", () => {
    const c = counts([set(["a", "b", "c"], 90_000), set(["a"], 7_000, 1), set(["b", "c"], 3_000, 2)]);
    expect(c.a + c.b + c.c).toBe(100_000);
    expect(Math.max(c.a, c.b, c.c) - Math.min(c.a, c.b, c.c)).toBeLessThanOrEqual(1);
  });
});
