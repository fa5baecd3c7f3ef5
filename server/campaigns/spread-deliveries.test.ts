import { describe, expect, it } from "vitest";
import { spreadGroups, type SpreadGroup } from "./spread-deliveries";

const groups = (n: number, reach: string[], from = 0): SpreadGroup[] =>
  Array.from({ length: n }, (_, i) => ({ groupId: `g${from + i}`, position: from + i, reach }));
const counts = (m: Map<string, string>) => {
  const out: Record<string, number> = {};
  for (const c of m.values()) out[c] = (out[c] ?? 0) + 1;
  return out;
};

describe("spreadGroups", () => {
  it("every group reachable by all: counts differ by at most one, alternating in the segment's order", () => {
    const m = spreadGroups(groups(7, ["a", "b", "c"]), new Set(["a", "b", "c"]), ["a", "b", "c"]);
    expect(counts(m)).toEqual({ a: 3, b: 2, c: 2 });
    expect([...Array(4)].map((_, i) => m.get(`g${i}`))).toEqual(["a", "b", "c", "a"]);
  });

  it("groups only one number reaches are balanced by the shared ones (6 only a, 10 both: 8 and 8)", () => {
    const m = spreadGroups([...groups(6, ["a"]), ...groups(10, ["a", "b"], 6)], new Set(["a", "b"]), ["a", "b"]);
    expect(counts(m)).toEqual({ a: 8, b: 8 });
    for (let i = 0; i < 6; i++) expect(m.get(`g${i}`)).toBe("a");
  });

  it("only channels that can send take groups; a group none of whose channels can send keeps one that reaches it", () => {
    const m = spreadGroups([...groups(4, ["a", "b"]), ...groups(2, ["b"], 4)], new Set(["a"]), ["a", "b"]);
    expect([0, 1, 2, 3].map((i) => m.get(`g${i}`))).toEqual(["a", "a", "a", "a"]);
    expect([4, 5].map((i) => m.get(`g${i}`))).toEqual(["b", "b"]);
  });
});
