/**
 * The provider's participant events (join, leave) applied to the launches that hold the group
 * (docs/decisions.md#members): one `launch_participants` row per join (a re-join is a new row), its
 * `left_at` set on leave, the group's `members` moved, the groups re-statused (a group reaching
 * `capacity − margin` becomes full: `group_full`), and the launch engine woken (reserve groups).
 * Events may come twice (a gateway retries its webhook): a join of someone already in, or a second leave,
 * changes nothing. Events may come out of order (two webhooks racing, a join answered 5xx and sent again
 * after a later leave): they are placed by `at`, the platform's time where the event carries one (Evolution's
 * `date_time`: gateway-clock.ts), else when it arrived; a leave of someone never seen in the group lowers
 * `members` and is kept (`launch_early_leaves`), so that their join, if it is older than the leave, closes a
 * row instead of leaving it open, and a join older than their latest leave is a membership already over.
 * The rule (docs/launches.md#the-order-of-joins-and-leaves): an event never overrides a state of the same
 * person and group that came from a later time; a resend of an event already recorded changes nothing.
 *
 * One person, two ids (lid-phones.ts): the LID ⇄ phone pairings an event carries are stored with it; a
 * participant is recorded under the phone number when the launch's channels know it, a LID that came alone
 * in a join is looked up in the group's participant list (at most once a minute per group), and the
 * launch's rows of a LID whose number is now known move to the number before the event applies.
 *
 * Group commit: the events that arrive while a write is in flight go together in the next one (one
 * transaction, a handful of set-based statements whatever the batch's size), and each caller waits until its
 * own event is committed, so a webhook is never answered before its event is durable; when the write fails,
 * the caller's promise rejects (the gateway is answered 5xx and sends the event again).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { channelLidPhones, launchEarlyLeaves, launches, launchGroups, launchParticipants, participantEventsSeen } from "../../../db/schema";
import type { LidPhone, MessagingProvider, ProviderEvent } from "../../messaging/provider";
import { isLid } from "../../phones/phone";
import { foldAliases, noPairs, pairsFor, rowColumns, storePairs } from "./lid-phones";
import { moveMembers } from "./member-counts";
import { staffMatcher } from "./members";
import { applyRestatus } from "../../launches/launch/restatus-groups";
import { wakeLaunch } from "../../launches/launch/wake";
import { touchBuyers } from "../../launches/launch/buyers-stamp";

/** The provider's event (its `eventId`, when the gateway has one, is recorded once: participant_events_seen). */
export type ParticipantsEvent = Omit<Extract<ProviderEvent, { type: "group_participants" }>, "type">;

type Provider = Pick<MessagingProvider, "ownNumber" | "participantPairs">;

/** Returns the launches touched (their engines were woken). */
export async function recordParticipants(db: Db, provider: Provider, event: ParticipantsEvent): Promise<string[]> {
  const participants = [...new Set(event.participants.filter((p) => p.length > 0))];
  if (participants.length === 0) return [];
  const pairs = await withLookedUp(db, provider, { ...event, participants });
  return writerFor(db, provider).record({ ...event, participants, pairs });
}

/** A group's participant list is read at most this often to look LIDs up (one WhatsApp query each time). */
export const lidLookupGapMs = 60_000;
const lastLookup = new Map<string, number>();

/**
 * The event's pairings, plus, for a join with a LID no pairing covers, those of the group's participant list
 * (the person is in it now; the list may carry their number where the event did not). Only for groups a
 * launch holds, at most once per `lidLookupGapMs` per group; a failed look-up leaves the LID as it came
 * (its rows move to the number when a later event or the hourly check learns it).
 */
async function withLookedUp(db: Db, provider: Provider, event: ParticipantsEvent): Promise<LidPhone[]> {
  const pairs = event.pairs ?? [];
  if (event.action !== "join" || !provider.participantPairs) return pairs;
  const lids = event.participants.filter((p) => isLid(p) && !pairs.some((x) => x.lid === p));
  if (lids.length === 0) return pairs;
  const known = await db
    .select({ lid: channelLidPhones.lid })
    .from(channelLidPhones)
    .where(and(eq(channelLidPhones.channelId, event.channelId), inArray(channelLidPhones.lid, lids)));
  if (known.length === lids.length) return pairs;
  const key = `${event.channelId}\n${event.groupId}`;
  const last = lastLookup.get(key);
  const arrivedAt = (event.receivedAt ?? event.at).getTime();
  if (last !== undefined && arrivedAt - last < lidLookupGapMs) return pairs;
  const [held] = await db
    .select({ launchId: launchGroups.launchId })
    .from(launchGroups)
    .where(and(eq(launchGroups.groupId, event.groupId), eq(launchGroups.channelId, event.channelId)))
    .limit(1);
  if (!held) return pairs;
  lastLookup.set(key, arrivedAt);
  try {
    return [...pairs, ...(await provider.participantPairs(event.channelId, event.groupId))];
  } catch (err) {
    console.warn(`[launches] could not look the LIDs of ${event.groupId} up:`, err instanceof Error ? err.message : err);
    return pairs;
  }
}

const writers = new WeakMap<Db, WeakMap<object, ParticipantWriter>>();

function writerFor(db: Db, provider: Provider): ParticipantWriter {
  let byProvider = writers.get(db);
  if (!byProvider) {
    byProvider = new WeakMap();
    writers.set(db, byProvider);
  }
  let writer = byProvider.get(provider);
  if (!writer) {
    writer = new ParticipantWriter(db, provider);
    byProvider.set(provider, writer);
  }
  return writer;
}

interface Waiting {
  event: ParticipantsEvent;
  resolve: (touched: string[]) => void;
  reject: (err: unknown) => void;
}

/** One writer per database and provider: events queue while a batch is being written. */
class ParticipantWriter {
  private queue: Waiting[] = [];
  private writing = false;

  constructor(
    private readonly db: Db,
    private readonly provider: Provider,
    private readonly maxBatch = 500,
  ) {}

  record(event: ParticipantsEvent): Promise<string[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain() {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const touched = await applyEvents(
            this.db,
            this.provider,
            batch.map((w) => w.event),
          );
          for (const [i, w] of batch.entries()) w.resolve(touched[i]);
        } catch (err) {
          if (batch.length === 1) {
            batch[0].reject(err);
            continue;
          }
          // One event's failure must not fail the others: each alone, in order.
          for (const w of batch) await applyEvents(this.db, this.provider, [w.event]).then((t) => w.resolve(t[0]), w.reject);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

interface HeldBy {
  launchId: string;
  groupId: string;
  channelId: string;
  /** The launch's channels: whose LID pairings it may use. */
  channelIds: string[];
  /** One of them learned a LID ⇄ phone pairing (rows of this launch may stand under a LID). */
  channelsKnowLids: boolean;
  isStaff: (participant: string) => boolean;
}

/** What the batch knows of one person in one launch's group, updated event by event. */
interface PersonState {
  /** The open row (an id when stored, a new row's index when made in this batch) and its join. */
  open: (({ id: number } | { index: number }) & { joinedAt: Date }) | null;
  /** Any row, open or closed, ever. */
  seen: boolean;
  /** The latest leave of a closed row: a join older than it is a repeat of a join already closed. */
  lastLeftAt: Date | null;
  /** A leave kept before any join (stored or made in this batch), and whether it is stored. */
  earlyLeave: { at: Date; stored: boolean } | null;
}

/** Applies events in their order, in one transaction; returns, per event, the launches it touched. */
async function applyEvents(db: Db, provider: Provider, events: ParticipantsEvent[]): Promise<string[][]> {
  // The pairings first (whatever group they came from: facts about people, kept for later launches), in
  // their own statements: so that this batch's people are recorded, and their older rows found, under their number.
  const pairsByChannel = new Map<string, LidPhone[]>();
  for (const e of events) if (e.pairs?.length) pairsByChannel.set(e.channelId, [...(pairsByChannel.get(e.channelId) ?? []), ...e.pairs]);
  for (const [channelId, pairs] of [...pairsByChannel].sort(([a], [b]) => a.localeCompare(b)))
    await storePairs(db, channelId, pairs, events[0].receivedAt ?? events[0].at);
  const held = await launchesHolding(db, provider, events);
  const perEvent = events.map((e) => held.filter((h) => h.channelId === e.channelId && h.groupId === e.groupId));
  const launchIds = [...new Set(held.map((h) => h.launchId))].sort();
  if (launchIds.length === 0) return events.map(() => []);
  await db.transaction(async (tx) => {
    // Events of one launch apply one batch at a time: the launches' rows first, in id order (applyRestatus
    // and the group additions take the launch's row first too: one lock order, no deadlock).
    // The same statement bumps their buyers stamp: info-launch counts buyers_in_groups again after this batch.
    await touchBuyers(tx, launchIds);
    const fresh = await firstDeliveries(tx, events);
    const launchChannels = new Map(held.map((h) => [h.launchId, h.channelIds]));
    const staffOf = new Map(held.map((h) => [h.launchId, h.isStaff]));
    // Only where a LID is in play (in the batch, or known to the launch's channels): phone-only traffic
    // (the simulator, a gateway that never shows LIDs) pays no query for it.
    const lidsInPlay = held.some((h) => h.channelsKnowLids) || events.some((e) => e.pairs?.length || e.participants.some(isLid));
    const pairs = lidsInPlay
      ? await pairsFor(
          tx,
          launchChannels,
          events.flatMap((e) => [...e.participants, ...(e.pairs ?? []).flatMap((p) => [p.lid, p.phone])]),
        )
      : noPairs(launchChannels.keys());
    const folded = await foldAliases(tx, pairs, (launchId, p) => staffOf.get(launchId)?.(p) ?? false);
    const people = (launchId: string, e: ParticipantsEvent) => [...new Set(e.participants.map((p) => pairs.get(launchId)!.canonical(p)))];
    const state = await loadState(
      tx,
      launchIds,
      events,
      events.flatMap((e, i) => perEvent[i].flatMap((h) => people(h.launchId, e))),
    );
    const inserts: { launchId: string; groupId: string; participant: string; staff: boolean; joinedAt: Date; leftAt: Date | null }[] = [];
    const closes = new Map<number, Date>();
    const earlyLeavesKept = new Map<string, { launchId: string; groupId: string; participant: string; at: Date }>();
    const earlyLeavesGone = new Map<string, { launchId: string; groupId: string; participant: string }>();
    const deltas = new Map<string, { launchId: string; groupId: string; delta: number }>();
    const lastAt = new Map<string, Date>();
    /** When the latest event of each group arrived (members are corrected from the platform only well after it). */
    const arrived = new Map<string, { launchId: string; groupId: string; at: Date }>();
    const move = (h: Pick<HeldBy, "launchId" | "groupId">, by: number) => {
      const k = `${h.launchId}\n${h.groupId}`;
      const d = deltas.get(k) ?? { launchId: h.launchId, groupId: h.groupId, delta: 0 };
      d.delta += by;
      deltas.set(k, d);
    };
    for (const f of folded) move(f, f.delta);
    events.forEach((e, i) => {
      for (const h of perEvent[i]) {
        const k = `${h.launchId}\n${h.groupId}`;
        const came = e.receivedAt ?? e.at;
        const before = arrived.get(k);
        if (!before || before.at < came) arrived.set(k, { launchId: h.launchId, groupId: h.groupId, at: came });
        // A resend of an event already recorded: whatever happened since, it changes nothing.
        if (!fresh[i]) continue;
        for (const participant of people(h.launchId, e)) {
          const key = personKey(h.launchId, h.groupId, participant);
          const st = state.get(key) ?? emptyState();
          state.set(key, st);
          const who = { launchId: h.launchId, groupId: h.groupId, participant };
          if (e.action === "join") {
            if (st.open || (st.lastLeftAt && e.at <= st.lastLeftAt)) continue;
            // Their leave came first: the join closes at once, and gives back the member the leave took.
            const lateJoin = st.earlyLeave && st.earlyLeave.at >= e.at ? st.earlyLeave.at : null;
            if (st.earlyLeave) {
              if (st.earlyLeave.stored) earlyLeavesGone.set(key, who);
              earlyLeavesKept.delete(key);
              st.earlyLeave = null;
            }
            inserts.push({ ...who, staff: h.isStaff(participant), joinedAt: e.at, leftAt: lateJoin });
            st.open = lateJoin ? null : { index: inserts.length - 1, joinedAt: e.at };
            if (lateJoin) st.lastLeftAt = lateJoin;
            st.seen = true;
            move(h, 1);
          } else {
            if (st.open) {
              // A leave older than the open row's join belongs to an earlier membership (a retried webhook).
              if (e.at < st.open.joinedAt) continue;
              if ("id" in st.open) closes.set(st.open.id, e.at);
              else inserts[st.open.index].leftAt = e.at;
              st.open = null;
              st.lastLeftAt = e.at;
              move(h, -1);
            } else if (!st.seen && !st.earlyLeave) {
              // Never seen in the group (there before its adoption, or their join is late): one member less.
              st.earlyLeave = { at: e.at, stored: false };
              earlyLeavesKept.set(key, { ...who, at: e.at });
              move(h, -1);
            }
          }
          lastAt.set(h.launchId, e.at);
        }
      }
    });
    await writeChanges(tx, { inserts, closes, earlyLeavesKept: [...earlyLeavesKept.values()], earlyLeavesGone: [...earlyLeavesGone.values()] });
    const moved = await moveMembers(tx, [...deltas.values()], [...arrived.values()]);
    for (const launchId of new Set(moved.map((d) => d.launchId))) await applyRestatus(tx, launchId, lastAt.get(launchId));
  });
  for (const id of launchIds) wakeLaunch(id);
  return perEvent.map((hs) => [...new Set(hs.map((h) => h.launchId))]);
}

const emptyState = (): PersonState => ({ open: null, seen: false, lastLeftAt: null, earlyLeave: null });

/** Per event: is this its first recorded delivery? Events with an id are remembered in the batch's transaction. */
async function firstDeliveries(tx: Tx, events: ParticipantsEvent[]): Promise<boolean[]> {
  const ids = events.flatMap((e) => (e.eventId ? [{ channelId: e.channelId, eventId: e.eventId, seenAt: e.at }] : []));
  if (ids.length === 0) return events.map(() => true);
  const stored = await tx
    .insert(participantEventsSeen)
    .values(ids)
    .onConflictDoNothing()
    .returning({ channelId: participantEventsSeen.channelId, eventId: participantEventsSeen.eventId });
  const firstTime = new Set(stored.map((r) => `${r.channelId}\n${r.eventId}`));
  return events.map((e) => {
    if (!e.eventId) return true;
    const k = `${e.channelId}\n${e.eventId}`;
    // Twice in one batch: the first counts.
    return firstTime.delete(k);
  });
}

/** Resends stop within about 20 minutes (Evolution's schedule); a day of event ids is plenty. */
export const eventIdRetentionMs = 86_400_000;

const personKey = (launchId: string, groupId: string, participant: string) => `${launchId}\n${groupId}\n${participant}`;

/** The launches holding the events' groups, each with its staff predicate. */
async function launchesHolding(db: Db, provider: Provider, events: ParticipantsEvent[]): Promise<HeldBy[]> {
  const groupIds = [...new Set(events.map((e) => e.groupId))];
  const rows = await db
    .select({
      launchId: launchGroups.launchId,
      groupId: launchGroups.groupId,
      channelId: launchGroups.channelId,
      staffNumbers: launches.staffNumbers,
      groupTemplate: launches.groupTemplate,
      channelIds: launches.channelIds,
      channelsKnowLids: sql<boolean>`exists (select 1 from ${channelLidPhones}
        where ${channelLidPhones.channelId} in (select jsonb_array_elements_text(${launches.channelIds})))`,
    })
    .from(launchGroups)
    .innerJoin(launches, eq(launches.id, launchGroups.launchId))
    .where(inArray(launchGroups.groupId, groupIds));
  const staff = new Map<string, (p: string) => boolean>();
  const out: HeldBy[] = [];
  for (const r of rows) {
    let isStaff = staff.get(r.launchId);
    if (!isStaff) {
      isStaff = await staffMatcher(provider, r);
      staff.set(r.launchId, isStaff);
    }
    out.push({
      launchId: r.launchId,
      groupId: r.groupId,
      channelId: r.channelId,
      channelIds: r.channelIds,
      channelsKnowLids: Boolean(r.channelsKnowLids),
      isStaff,
    });
  }
  return out;
}

/** Every row and early leave of the batch's people (as recorded: by number when known) in the batch's launches and groups. */
async function loadState(tx: Tx, launchIds: string[], events: ParticipantsEvent[], recordedAs: string[]): Promise<Map<string, PersonState>> {
  const groupIds = [...new Set(events.map((e) => e.groupId))];
  const people = [...new Set(recordedAs)];
  const state = new Map<string, PersonState>();
  const at = (launchId: string, groupId: string, participant: string) => {
    const key = personKey(launchId, groupId, participant);
    const st = state.get(key) ?? emptyState();
    state.set(key, st);
    return st;
  };
  const rows = await tx
    .select(rowColumns)
    .from(launchParticipants)
    .where(
      and(inArray(launchParticipants.launchId, launchIds), inArray(launchParticipants.groupId, groupIds), inArray(launchParticipants.participant, people)),
    );
  for (const r of rows) {
    const st = at(r.launchId, r.groupId, r.participant);
    st.seen = true;
    if (r.leftAt === null) st.open = { id: r.id, joinedAt: r.joinedAt };
    else if (!st.lastLeftAt || r.leftAt > st.lastLeftAt) st.lastLeftAt = r.leftAt;
  }
  const early = await tx
    .select()
    .from(launchEarlyLeaves)
    .where(and(inArray(launchEarlyLeaves.launchId, launchIds), inArray(launchEarlyLeaves.groupId, groupIds), inArray(launchEarlyLeaves.participant, people)));
  for (const r of early) at(r.launchId, r.groupId, r.participant).earlyLeave = { at: r.leftAt, stored: true };
  return state;
}

async function writeChanges(
  tx: Tx,
  c: {
    inserts: (typeof launchParticipants.$inferInsert)[];
    closes: Map<number, Date>;
    earlyLeavesKept: { launchId: string; groupId: string; participant: string; at: Date }[];
    earlyLeavesGone: { launchId: string; groupId: string; participant: string }[];
  },
) {
  if (c.inserts.length > 0) await tx.insert(launchParticipants).values(c.inserts);
  if (c.closes.size > 0) {
    const values = sql.join(
      [...c.closes].map(([id, at]) => sql`(${id}::bigint, ${tsParam(at)})`),
      sql`, `,
    );
    await tx.execute(sql`update launch_participants p set left_at = v.at from (values ${values}) as v(id, at) where p.id = v.id and p.left_at is null`);
  }
  if (c.earlyLeavesKept.length > 0) {
    await tx
      .insert(launchEarlyLeaves)
      .values(c.earlyLeavesKept.map((l) => ({ launchId: l.launchId, groupId: l.groupId, participant: l.participant, leftAt: l.at })))
      .onConflictDoNothing();
  }
  for (const l of c.earlyLeavesGone) {
    await tx
      .delete(launchEarlyLeaves)
      .where(and(eq(launchEarlyLeaves.launchId, l.launchId), eq(launchEarlyLeaves.groupId, l.groupId), eq(launchEarlyLeaves.participant, l.participant)));
  }
}
