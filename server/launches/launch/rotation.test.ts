import { describe, expect, it } from "vitest";
import { type RotationGroup, groupsToCreate, pickJoinGroup, restatus } from "./rotation";

const launch = { capacity: 5, margin: 1, reserve: 1 };
const g = (
  position: number,
  members: number,
  status: RotationGroup["status"] = "filling",
  inviteUrl: string | null = `https://chat.whatsapp.com/c${position}`,
) => ({
  position,
  members,
  status,
  inviteUrl,
});

describe("launch rotation", () => {
  it("sends visitors to the first open group below capacity − margin", () => {
    expect(pickJoinGroup([g(1, 3), g(2, 0, "reserve")], launch)?.group.position).toBe(1);
    expect(pickJoinGroup([g(1, 4, "full"), g(2, 0, "reserve")], launch)?.group.position).toBe(2);
    expect(pickJoinGroup([g(1, 4), g(2, 0, "reserve")], launch)?.group.position).toBe(2);
  });

  it("uses the last group's margin when every group is full, then gives up", () => {
    expect(pickJoinGroup([g(1, 4, "full"), g(2, 4, "full")], launch)).toEqual({ group: g(2, 4, "full"), usingMargin: true });
    expect(pickJoinGroup([g(1, 4, "full"), g(2, 5, "full")], launch)).toBeNull();
    expect(pickJoinGroup([g(1, 0, "broken")], launch)).toBeNull();
  });

  it("keeps a full group full when people leave and moves filling to the next group", () => {
    expect(restatus([g(1, 2, "full"), g(2, 0, "reserve")], launch).map((c) => [c.group.position, c.status])).toEqual([[2, "filling"]]);
    expect(restatus([g(1, 4), g(2, 0, "reserve")], launch).map((c) => [c.group.position, c.status])).toEqual([
      [1, "full"],
      [2, "filling"],
    ]);
    expect(restatus([g(1, 1), g(2, 0, "reserve")], launch)).toEqual([]);
  });

  it("asks for reserve groups past 80 % of the usable capacity, and one group when all are full", () => {
    expect(groupsToCreate([g(1, 3)], launch)).toBe(0);
    expect(groupsToCreate([g(1, 4)], { ...launch, capacity: 10, margin: 0 })).toBe(0);
    expect(groupsToCreate([g(1, 8)], { ...launch, capacity: 10, margin: 0 })).toBe(1);
    expect(groupsToCreate([g(1, 8), g(2, 0, "reserve")], { ...launch, capacity: 10, margin: 0 })).toBe(0);
    expect(groupsToCreate([g(1, 4, "full")], launch)).toBe(1);
    expect(groupsToCreate([], { ...launch, reserve: 0 })).toBe(1);
  });
});
