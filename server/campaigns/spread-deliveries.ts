/**
 * Which channel sends to each group (CONTRACT §7 "Which channel sends"; docs/dispatch.md#several-numbers-per-group),
 * pure: every group gets one of the channels that reach it and can send now, spread evenly. Groups with fewer
 * choices are placed first and each goes to its least loaded choice (ties: the segment's channel order), so
 * where every group is reachable by the same channels their counts differ by at most one, and groups only one
 * number reaches are balanced by the others. A group none of whose channels can send now goes to the least
 * loaded of all that reach it (it waits there, and failover moves it once another can send).
 */
export interface SpreadGroup {
  groupId: string;
  position: number;
  /** The channels that reach it, in the segment's order (never empty). */
  reach: string[];
}

export function spreadGroups(groups: SpreadGroup[], sendable: ReadonlySet<string>, channelOrder: readonly string[]): Map<string, string> {
  const rank = new Map(channelOrder.map((id, i) => [id, i]));
  const order = (id: string) => rank.get(id) ?? channelOrder.length;
  const choices = groups.map((g) => {
    const able = g.reach.filter((c) => sendable.has(c));
    return { g, choices: (able.length ? able : g.reach).slice().sort((a, b) => order(a) - order(b)) };
  });
  choices.sort((a, b) => a.choices.length - b.choices.length || a.g.position - b.g.position);
  const load = new Map<string, number>();
  const chosen = new Map<string, string>();
  for (const { g, choices: cs } of choices) {
    let best = cs[0];
    for (const c of cs) if ((load.get(c) ?? 0) < (load.get(best) ?? 0)) best = c;
    load.set(best, (load.get(best) ?? 0) + 1);
    chosen.set(g.groupId, best);
  }
  return chosen;
}
