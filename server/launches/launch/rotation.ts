/**
 * Which group of a launch a visitor joins, which groups are full, and how many reserve groups to make
 * (docs/decisions.md#launches, "Numbers" and "The link"). Pure: the public link, the participant
 * events and the launch engine all decide through these functions.
 */
import type { launchGroupStatuses } from "../../../db/schema";

export type LaunchGroupStatus = (typeof launchGroupStatuses)[number];

export interface LaunchSizing {
  capacity: number;
  margin: number;
  reserve: number;
}

export interface RotationGroup {
  position: number;
  status: LaunchGroupStatus;
  members: number;
  inviteUrl: string | null;
}

/** A group is full at `capacity − margin` members. */
export const usableCapacity = (l: Pick<LaunchSizing, "capacity" | "margin">) => Math.max(1, l.capacity - l.margin);

/** Reserve groups are made when the filling group passes 80 % of its usable capacity. */
export const reserveThreshold = (l: Pick<LaunchSizing, "capacity" | "margin">) => Math.ceil(usableCapacity(l) * 0.8);

const open = (g: RotationGroup) => g.status === "filling" || g.status === "reserve";

/**
 * The group a visitor is sent to: the first open group in order below its usable capacity; when there
 * is none, the last group while it still has room within its margin (`usingMargin`); else null (the
 * closed page, and a `link_broken` event). A group without an invite URL is skipped.
 */
export function pickJoinGroup<G extends RotationGroup>(
  groups: readonly G[],
  l: Pick<LaunchSizing, "capacity" | "margin">,
): { group: G; usingMargin: boolean } | null {
  const ordered = [...groups].sort((a, b) => a.position - b.position);
  const usable = usableCapacity(l);
  const first = ordered.find((g) => open(g) && g.inviteUrl !== null && g.members < usable);
  if (first) return { group: first, usingMargin: false };
  const last = [...ordered].reverse().find((g) => g.status !== "broken" && g.inviteUrl !== null);
  if (last && last.members < l.capacity) return { group: last, usingMargin: true };
  return null;
}

/**
 * The statuses the groups should have: a group at its usable capacity becomes `full` (and stays full:
 * people leaving do not reopen it); `broken` stays; the first remaining group is `filling`, the later
 * ones `reserve`. Returns only the groups whose status changes.
 */
export function restatus<G extends RotationGroup>(
  groups: readonly G[],
  l: Pick<LaunchSizing, "capacity" | "margin">,
): { group: G; status: LaunchGroupStatus }[] {
  const usable = usableCapacity(l);
  const changes: { group: G; status: LaunchGroupStatus }[] = [];
  let fillingSeen = false;
  for (const g of [...groups].sort((a, b) => a.position - b.position)) {
    let status: LaunchGroupStatus;
    if (g.status === "broken" || g.status === "full") status = g.status;
    else if (g.members >= usable) status = "full";
    else if (!fillingSeen) {
      status = "filling";
      fillingSeen = true;
    } else status = "reserve";
    if (status !== g.status) changes.push({ group: g, status });
  }
  return changes;
}

/**
 * How many groups to create now (auto_create launches): enough that `reserve` open groups wait behind
 * the filling one once it has passed the threshold, and one filling group when every group is full or
 * broken. Never more than `reserve + 1` in one go.
 */
export function groupsToCreate(groups: readonly RotationGroup[], l: LaunchSizing): number {
  const usable = usableCapacity(l);
  const openGroups = [...groups].sort((a, b) => a.position - b.position).filter((g) => open(g) && g.members < usable);
  if (openGroups.length === 0) return Math.max(1, l.reserve);
  const [filling, ...waiting] = openGroups;
  if (filling && filling.members >= reserveThreshold(l)) return Math.max(0, l.reserve - waiting.length);
  return 0;
}
