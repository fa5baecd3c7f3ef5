import { describe, expect, it } from "vitest";
import { pickDue } from "./pick-due";

const due = (...specs: string[]) => specs.map((s) => ({ id: s, tenantId: s.split(".")[0] }));

describe("pickDue", () => {
  it("takes the longest-waiting first when nobody holds a worker", () => {
    expect(pickDue(due("a.1", "b.1", "c.1"), new Map(), 2, 4).map((d) => d.id)).toEqual(["a.1", "b.1"]);
  });

  it("spreads the free workers over tenants before a tenant gets a second", () => {
    expect(pickDue(due("a.1", "a.2", "a.3", "b.1", "c.1"), new Map(), 3, 4).map((d) => d.id)).toEqual(["a.1", "b.1", "c.1"]);
  });

  it("gives the next worker to the tenant that holds fewest, whatever its place in the queue", () => {
    expect(pickDue(due("a.1", "b.1"), new Map([["a", 2]]), 1, 4).map((d) => d.id)).toEqual(["b.1"]);
  });

  it("never lets a tenant hold more than its share, leaving workers free", () => {
    expect(pickDue(due("a.1", "a.2", "a.3"), new Map([["a", 1]]), 3, 2).map((d) => d.id)).toEqual(["a.1"]);
    expect(pickDue(due("a.1"), new Map([["a", 2]]), 3, 2)).toEqual([]);
  });

  it("takes nothing without a free worker, and does not change the map it was given", () => {
    const busy = new Map([["a", 1]]);
    expect(pickDue(due("b.1"), busy, 0, 4)).toEqual([]);
    pickDue(due("b.1", "b.2"), busy, 2, 4);
    expect([...busy]).toEqual([["a", 1]]);
  });
});
