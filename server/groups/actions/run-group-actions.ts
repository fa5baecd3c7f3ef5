import { and, asc, eq, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { recordAudit, systemActor } from "../../audit/record-audit";
import type { Db, Tx } from "../../../db/client";
import { channels, groupActionGroups, groupActions, segmentGroupChannels } from "../../../db/schema";
import { env } from "../../env";
import type { MessagingProvider } from "../../messaging/provider";
import { effectiveBudget } from "../../numbers/budget";
import { recordRateLimited } from "../../numbers/health";
import { tenantNumberHealth } from "../../numbers/health-view";
import { recordActionStatus } from "./action-events";
import { type ApplyOutcome, applyGroupChange, changeFor } from "./apply-group-change";
import { markBuyersRemoved } from "./buyer-removals";
import { addTargetGroups, targetSegmentId } from "./target-groups";

/** The action's lease: renewed by every claim; a holder that died frees it within this. */
const leaseMs = 30_000;
/** A pass works on one action at most this long, then lets the others (and other processes) have a turn. */
const passMs = 20_000;
/** A group whose admin numbers all cannot act waits this long for one (CONTRACT §8: no_channel). */
export const noChannelWaitMs = 30 * 60_000;
/** Applications of one group whose change did not show (or that the platform refused) before it fails. */
const maxTries = 2;
/**
 * How often the candidate channels' health and turns are read again within a pass. Not after each wait for a turn: the
 * claim takes the turn only from a number that can act at that moment (`canActAt`) and answers "busy" otherwise, which
 * reads them again at once; this read only lets the choice see a number that came back (docs/groups.md#how-it-runs).
 */
const channelReadMs = 5000;

type ActionRow = typeof groupActions.$inferSelect;
type ChannelRow = Pick<typeof channels.$inferSelect, "id" | "status" | "healthState" | "healthUntil" | "nextGroupActionAt" | "limits">;

/** A group left to do, as this pass knows it. */
interface Left {
  groupId: string;
  position: number;
  /** Counted tries (an application whose change did not show, or the platform's refusal). */
  tries: number;
  notAdmin: string[];
  waitingSince: Date | null;
  /** The change may be on the platform already (a claim whose answer was lost): read back before applying. */
  readFirst: boolean;
}

/** A group's result, written in the transaction that claims the next group (or the pass's last one). */
interface Result {
  groupId: string;
  state: "pending" | "applying" | "done" | "failed";
  channelId: string | null;
  reason: string | null;
  tries: number;
  notAdmin: string[];
  waitingSince: Date | null;
}

/**
 * A number can act on a group while connected and in a state that acts: `ok`, `warming`, `capped` (group actions do not
 * count against daily_message_cap), or `cooling` whose time has passed. Offline, `restricted`, `logged_out`, `banned`
 * and a current `cooling` cannot.
 */
const canAct = (c: ChannelRow, now: Date) =>
  c.status === "connected" &&
  (["ok", "warming", "capped"].includes(c.healthState) || (c.healthState === "cooling" && (c.healthUntil?.getTime() ?? 0) <= now.getTime()));

/** canAct in SQL, at the claim: the number's turn is taken only while it can act (its state may have changed since read). */
const canActAt = (at: Date) =>
  and(
    eq(channels.status, "connected"),
    or(
      inArray(channels.healthState, ["ok", "warming", "capped"]),
      and(eq(channels.healthState, "cooling"), or(isNull(channels.healthUntil), lte(channels.healthUntil, at))),
    ),
  );

export interface GroupActionPassOptions {
  /** Checked between groups: true stops the pass (the runner is stopping). */
  stopping?: () => boolean;
  /** Overrides the pass's time budget per action (tests). */
  passMs?: number;
}

/**
 * One pass of the group-action engine (docs/groups.md#how-it-runs): every due action that no process holds, one after
 * another, each for at most `passMs`. Answers whether some action still has work now (the runner goes again at once).
 */
export async function runGroupActions(
  db: Db,
  provider: MessagingProvider,
  now: Date,
  actionId?: string,
  opts: GroupActionPassOptions = {},
): Promise<{ more: boolean }> {
  const due = await db
    .select({ id: groupActions.id })
    .from(groupActions)
    .where(
      and(
        inArray(groupActions.status, ["scheduled", "running"]),
        lte(groupActions.nextRunAt, now),
        or(isNull(groupActions.leaseUntil), lt(groupActions.leaseUntil, now)),
        actionId ? eq(groupActions.id, actionId) : undefined,
      ),
    )
    .orderBy(asc(groupActions.nextRunAt))
    .limit(20);
  let more = false;
  for (const { id } of due) {
    if (opts.stopping?.()) return { more: false };
    const r = await runGroupAction(db, provider, id, now, opts).catch((err) => {
      console.error(`[group-actions] ${id}: pass failed`, err);
      return { more: false };
    });
    more ||= r.more;
  }
  return { more };
}

/** Takes the action's lease (expired or free), or undefined when another process holds it or it is not due. */
async function acquire(db: Db, actionId: string, now: Date, token: Date): Promise<ActionRow | undefined> {
  const [row] = await db
    .update(groupActions)
    .set({ leaseUntil: token })
    .where(
      and(
        eq(groupActions.id, actionId),
        inArray(groupActions.status, ["scheduled", "running"]),
        lte(groupActions.nextRunAt, now),
        or(isNull(groupActions.leaseUntil), lt(groupActions.leaseUntil, now)),
      ),
    )
    .returning();
  return row;
}

/** Writes a group's result (inside the claim's or the release's transaction). */
async function writeResult(tx: Tx, actionId: string, r: Result, at: Date) {
  await tx
    .update(groupActionGroups)
    .set({
      state: r.state,
      channelId: r.channelId,
      reason: r.reason,
      attempts: r.tries,
      notAdmin: r.notAdmin,
      waitingSince: r.waitingSince,
      at,
    })
    .where(and(eq(groupActionGroups.actionId, actionId), eq(groupActionGroups.groupId, r.groupId), inArray(groupActionGroups.state, ["pending", "applying"])));
  // A buyer removal (buyer-removals.ts): the buyers it removed from this group are marked, with their events.
  if (r.state === "done") await markBuyersRemoved(tx, actionId, r.groupId, at);
}

const counted = (r: Result | null) => ({ done: r?.state === "done" ? 1 : 0, failed: r?.state === "failed" ? 1 : 0 });

async function runGroupAction(
  db: Db,
  provider: MessagingProvider,
  actionId: string,
  passStart: Date,
  opts: GroupActionPassOptions,
): Promise<{ more: boolean }> {
  let token = new Date(Date.now() + leaseMs);
  const acquired = await acquire(db, actionId, passStart, token);
  if (!acquired) return { more: false };
  let action = acquired;
  const segmentId = await targetSegmentId(db, action);
  if (action.status === "scheduled") {
    const startedAt = new Date();
    action = await db.transaction(async (tx) => {
      // A launch's groups are its groups now, those made after the action was scheduled included.
      if (action.launchId && !action.fixedGroups) await addTargetGroups(tx, action.id, segmentId);
      const [row] = await tx.update(groupActions).set({ status: "running", startedAt }).where(eq(groupActions.id, action.id)).returning();
      await recordActionStatus(tx, row, startedAt);
      await recordAudit(tx, { tenantId: row.tenantId, actor: systemActor, action: "group_action.start", target: row.id, at: startedAt });
      return row;
    });
  }

  const rows = await db
    .select()
    .from(groupActionGroups)
    .where(and(eq(groupActionGroups.actionId, action.id), inArray(groupActionGroups.state, ["pending", "applying"])))
    .orderBy(asc(groupActionGroups.position));
  const left: Left[] = rows.map((r) => ({
    groupId: r.groupId,
    position: r.position,
    tries: r.attempts,
    notAdmin: r.notAdmin,
    waitingSince: r.waitingSince,
    readFirst: r.state === "applying",
  }));
  // The target's channels that reach each group (the tenant's own: a channel deleted since is gone from the reach).
  const reachRows = await db
    .select({ groupId: segmentGroupChannels.groupId, channelId: segmentGroupChannels.channelId })
    .from(segmentGroupChannels)
    .innerJoin(channels, eq(channels.id, segmentGroupChannels.channelId))
    .where(and(eq(segmentGroupChannels.segmentId, segmentId), eq(channels.tenantId, action.tenantId)));
  const reach = new Map<string, string[]>();
  for (const r of reachRows) reach.set(r.groupId, [...(reach.get(r.groupId) ?? []), r.channelId]);
  const channelIds = [...new Set(reachRows.map((r) => r.channelId))];
  const tenantBudget = await tenantNumberHealth(db, action.tenantId);
  const gapOf = (c: ChannelRow) => Math.max(env.groupActionGapMs, effectiveBudget(tenantBudget, c.limits).min_send_gap_seconds * 1000);

  let channelRows = new Map<string, ChannelRow>();
  let channelsReadAt = 0;
  const readChannels = async () => {
    if (Date.now() - channelsReadAt < channelReadMs || channelIds.length === 0) return;
    const list = await db
      .select({
        id: channels.id,
        status: channels.status,
        healthState: channels.healthState,
        healthUntil: channels.healthUntil,
        nextGroupActionAt: channels.nextGroupActionAt,
        limits: channels.limits,
      })
      .from(channels)
      .where(inArray(channels.id, channelIds));
    channelRows = new Map(list.map((c) => [c.id, c]));
    channelsReadAt = Date.now();
  };

  const waitingKnown = new Set(left.filter((g) => g.waitingSince).map((g) => g.groupId));
  const usage = new Map<string, number>();
  /** Channels the platform said cannot act now, for the rest of this pass. */
  const unavailable = new Set<string>();
  const change = (g: Left) => changeFor(action.action, action.picture, g.position);
  const deadline = Date.now() + (opts.passMs ?? passMs);
  let pending: Result | null = null;
  let lost = false;
  let canceled = false;
  let nextLook: Date | null = null;

  while (left.length > 0 && !lost && !canceled && Date.now() < deadline && !opts.stopping?.()) {
    await readChannels();
    const now = new Date();
    let pick: { g: Left; channelId: string } | undefined;
    let soonest: number | null = null;
    for (const g of [...left]) {
      const admins = (reach.get(g.groupId) ?? []).filter((id) => !g.notAdmin.includes(id));
      if (admins.length === 0) {
        // Every channel of the target that reaches it answered "not admin" (or none reaches it).
        const r: Result = {
          groupId: g.groupId,
          state: "failed",
          channelId: null,
          reason: "not_admin",
          tries: g.tries,
          notAdmin: g.notAdmin,
          waitingSince: null,
        };
        left.splice(left.indexOf(g), 1);
        pending = await flushIfNeeded(db, action.id, pending, r);
        continue;
      }
      const able = admins.filter((id) => !unavailable.has(id) && channelRows.has(id) && canAct(channelRows.get(id) as ChannelRow, now));
      if (able.length === 0) {
        // A cooling number comes back by itself at its time: look again then.
        for (const id of admins) {
          const c = channelRows.get(id);
          if (c?.healthState === "cooling" && c.healthUntil && c.healthUntil > now) soonest = Math.min(soonest ?? Infinity, c.healthUntil.getTime());
        }
        g.waitingSince ??= now;
        if (now.getTime() - g.waitingSince.getTime() >= noChannelWaitMs) {
          const r: Result = {
            groupId: g.groupId,
            state: "failed",
            channelId: null,
            reason: "no_channel",
            tries: g.tries,
            notAdmin: g.notAdmin,
            waitingSince: g.waitingSince,
          };
          left.splice(left.indexOf(g), 1);
          pending = await flushIfNeeded(db, action.id, pending, r);
        }
        continue;
      }
      const readyAt = (id: string) => channelRows.get(id)?.nextGroupActionAt?.getTime() ?? 0;
      const ready = able.filter((id) => readyAt(id) <= now.getTime());
      if (ready.length === 0) {
        const at = Math.min(...able.map(readyAt));
        soonest = soonest === null ? at : Math.min(soonest, at);
        continue;
      }
      // Spread: the ready admin number that did the fewest of this action's groups.
      ready.sort((a, b) => (usage.get(a) ?? 0) - (usage.get(b) ?? 0));
      pick = { g, channelId: ready[0] };
      break;
    }
    if (!pick) {
      if (soonest !== null && soonest - Date.now() < deadline - Date.now()) {
        await sleep(Math.max(10, soonest - Date.now()));
        continue;
      }
      // Every group left waits for a number (or the next turn is past this pass): look again later.
      // A number the platform turned away in this pass is asked again soon (its state may say why by then).
      nextLook = new Date(soonest ?? Date.now() + (unavailable.size > 0 ? 2_000 : 15_000));
      break;
    }

    // The claim: the previous group's result, the lease renewed with the counters, the number's turn, this group.
    const { g, channelId } = pick;
    const claimAt = new Date();
    const next = new Date(claimAt.getTime() + leaseMs);
    const prev: Result | null = pending;
    const claim = await db.transaction(async (tx) => {
      const c = counted(prev);
      const [held] = await tx
        .update(groupActions)
        .set({ leaseUntil: next, done: sql`${groupActions.done} + ${c.done}`, failed: sql`${groupActions.failed} + ${c.failed}` })
        .where(and(eq(groupActions.id, action.id), eq(groupActions.leaseUntil, token)))
        .returning({ status: groupActions.status });
      if (!held) return "lost" as const;
      if (prev) await writeResult(tx, action.id, prev, claimAt);
      if (held.status === "canceled") return "canceled" as const;
      const gap = gapOf(channelRows.get(channelId) as ChannelRow);
      const [turn] = await tx
        .update(channels)
        .set({ nextGroupActionAt: new Date(claimAt.getTime() + gap) })
        .where(and(eq(channels.id, channelId), or(isNull(channels.nextGroupActionAt), lte(channels.nextGroupActionAt, claimAt)), canActAt(claimAt)))
        .returning({ at: channels.nextGroupActionAt });
      if (!turn) return "busy" as const;
      const [claimed] = await tx
        .update(groupActionGroups)
        .set({ state: "applying", channelId, at: claimAt })
        .where(
          and(eq(groupActionGroups.actionId, action.id), eq(groupActionGroups.groupId, g.groupId), inArray(groupActionGroups.state, ["pending", "applying"])),
        )
        .returning({ groupId: groupActionGroups.groupId });
      const row = channelRows.get(channelId);
      if (row) row.nextGroupActionAt = turn.at;
      return claimed ? ("claimed" as const) : ("gone" as const);
    });
    if (claim === "lost") {
      lost = true;
      break;
    }
    token = next;
    pending = null;
    if (claim === "canceled") {
      canceled = true;
      break;
    }
    if (claim === "busy") {
      // Another action (or process) took the number's turn, or the number can no longer act: read them again.
      channelsReadAt = 0;
      continue;
    }
    if (claim === "gone") {
      left.splice(left.indexOf(g), 1);
      continue;
    }

    const outcome = await applyGroupChange(provider, channelId, g.groupId, change(g), g.readFirst);
    pending = await settle(db, g, channelId, outcome, left, usage, unavailable);
    if (outcome.kind === "unavailable" && outcome.rateLimited) channelsReadAt = 0;
  }

  // Release: the last result, the counters, and the action completed (every group done or failed) or looked at again later.
  const finishing = left.length === 0 && !lost && !canceled;
  const last: Result | null = pending;
  const releasedAt = new Date();
  const more = !lost && !canceled && !finishing && nextLook === null;
  await db.transaction(async (tx) => {
    const c = counted(last);
    const [held] = await tx
      .update(groupActions)
      .set({
        done: sql`${groupActions.done} + ${c.done}`,
        failed: sql`${groupActions.failed} + ${c.failed}`,
        leaseUntil: null,
        nextRunAt: nextLook ?? releasedAt,
        ...(finishing
          ? { status: sql`case when ${groupActions.status} = 'running' then 'completed' else ${groupActions.status} end`, finishedAt: releasedAt }
          : {}),
      })
      .where(and(eq(groupActions.id, action.id), eq(groupActions.leaseUntil, token)))
      .returning();
    if (!held) return;
    if (last) await writeResult(tx, action.id, last, releasedAt);
    // Groups that began waiting for a number in this pass keep when they began (no_channel after 30 minutes).
    for (const g of left) {
      if (g.waitingSince && !waitingKnown.has(g.groupId)) {
        await tx
          .update(groupActionGroups)
          .set({ waitingSince: g.waitingSince })
          .where(and(eq(groupActionGroups.actionId, action.id), eq(groupActionGroups.groupId, g.groupId), isNull(groupActionGroups.waitingSince)));
      }
    }
    if (finishing && held.status === "completed") {
      await recordActionStatus(tx, held, releasedAt);
      // One audit entry for the action's end, its per-group results being in the action (never one entry per group).
      await recordAudit(tx, { tenantId: held.tenantId, actor: systemActor, action: "group_action.complete", target: held.id, at: releasedAt });
    }
  });
  return { more };
}

/**
 * A result found while choosing (a group that failed without a claim): written with the one before it at once, since no
 * claim follows it for sure.
 */
async function flushIfNeeded(db: Db, actionId: string, before: Result | null, r: Result): Promise<null> {
  await db.transaction(async (tx) => {
    const c = { done: counted(before).done, failed: counted(before).failed + 1 };
    await tx
      .update(groupActions)
      .set({ done: sql`${groupActions.done} + ${c.done}`, failed: sql`${groupActions.failed} + ${c.failed}` })
      .where(eq(groupActions.id, actionId));
    if (before) await writeResult(tx, actionId, before, new Date());
    await writeResult(tx, actionId, r, new Date());
  });
  return null;
}

/** What an application's outcome does to the group: its result, and what this pass remembers. */
async function settle(
  db: Db,
  g: Left,
  channelId: string,
  outcome: ApplyOutcome,
  left: Left[],
  usage: Map<string, number>,
  unavailable: Set<string>,
): Promise<Result> {
  const base = { groupId: g.groupId, channelId, notAdmin: g.notAdmin, waitingSince: null as Date | null };
  const drop = () => left.splice(left.indexOf(g), 1);
  switch (outcome.kind) {
    case "done":
      drop();
      usage.set(channelId, (usage.get(channelId) ?? 0) + 1);
      return { ...base, state: "done", reason: null, tries: g.tries + 1 };
    case "failed":
      drop();
      return { ...base, state: "failed", reason: outcome.reason, tries: g.tries + 1 };
    case "not_admin":
      g.notAdmin = [...g.notAdmin, channelId];
      return { ...base, notAdmin: g.notAdmin, state: g.readFirst ? "applying" : "pending", reason: null, tries: g.tries };
    case "unavailable":
      // A throttled number cools (its state says until when); another that cannot act sits out the rest of the pass.
      if (outcome.rateLimited) await recordRateLimited(db, channelId, new Date());
      else unavailable.add(channelId);
      g.readFirst ||= outcome.maybeApplied;
      return { ...base, state: g.readFirst ? "applying" : "pending", reason: null, tries: g.tries };
    case "again":
      g.tries += 1;
      g.readFirst = true;
      if (g.tries >= maxTries) {
        drop();
        return { ...base, state: "failed", reason: outcome.reason, tries: g.tries };
      }
      return { ...base, state: "applying", reason: null, tries: g.tries };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
