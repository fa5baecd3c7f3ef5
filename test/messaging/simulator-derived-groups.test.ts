/**
 * The simulator's derived groups (`Grupo nn` of each channel) are recognised from a group id alone
 * (derivedGroup), the way the send path asks for every message: the answer must be the list's, for every
 * group of the list and for ids that only look alike.
 */
import { describe, expect, it } from "vitest";
import { derivedGroup, simulatedGroups } from "../../server/messaging/simulator";

describe("derivedGroup", () => {
  it("finds each of a channel's groups with its name, and nothing else", () => {
    for (const count of [1, 9, 99, 100, 1000]) {
      const groups = simulatedGroups("ch_a", count);
      for (const g of groups) expect(derivedGroup("ch_a", g.id_group, count)).toEqual(g);
      const [first] = groups;
      const last = groups[groups.length - 1];
      // Another channel's group, the next number past the list, another width, a look-alike suffix.
      expect(derivedGroup("ch_b", first.id_group, count)).toBeUndefined();
      expect(
        derivedGroup(
          "ch_a",
          last.id_group.replace(/\d+@g\.us$/, (m) => `${String(count + 1).padStart(m.length - 5, "0")}@g.us`),
          count,
        ),
      ).toBeUndefined();
      expect(derivedGroup("ch_a", first.id_group.replace("@g.us", "0@g.us"), count)).toBeUndefined();
      expect(derivedGroup("ch_a", `${first.id_group}x`, count)).toBeUndefined();
      expect(derivedGroup("ch_a", first.id_group.replace(/\d\d@g\.us$/, "00@g.us"), count)).toBeUndefined();
    }
  });
});
