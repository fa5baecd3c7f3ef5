/**
 * One person, two ids (docs/decisions.md#members): WhatsApp shows a participant by phone number or by an
 * opaque LID (`<digits>@lid`), and Baileys 7 reports one person under either (joins as a LID, leaves as a
 * phone number). Each channel keeps the pairings it learned (`channel_lid_phones`, from every participant
 * event and list that carries both); a launch records a participant under the phone number when one of its
 * channels knows it, and a launch's rows recorded under a LID move to the phone number once it is known.
 */
import { and, desc, eq, inArray, or, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { channelLidPhones, launchEarlyLeaves, launchParticipants } from "../../../db/schema";
import type { LidPhone } from "../../messaging/provider";
import { isLid, phoneKey } from "../../phones/phone";
import { touchBuyersOfChannel } from "../../launches/launch/buyers-stamp";
import { ForgettableCache } from "./forgettable-cache";

/**
 * Stores the pairings a channel learned (the last one given wins for a LID). One statement, its rows in LID
 * order, outside any launch's transaction: two writers lock the same rows in the same order.
 */
export async function storePairs(db: Db | Tx, channelId: string, pairs: LidPhone[], at: Date) {
  const byLid = new Map(pairs.filter((p) => isLid(p.lid) && /^\d{8,20}$/.test(p.phone)).map((p) => [p.lid, p.phone]));
  if (byLid.size === 0) return;
  const stored = await db
    .insert(channelLidPhones)
    .values([...byLid].sort(([a], [b]) => a.localeCompare(b)).map(([lid, phone]) => ({ channelId, lid, phone, learnedAt: at })))
    .onConflictDoUpdate({
      target: [channelLidPhones.channelId, channelLidPhones.lid],
      set: { phone: sql`excluded.phone`, learnedAt: sql`excluded.learned_at` },
      setWhere: sql`${channelLidPhones.phone} <> excluded.phone`,
    })
    .returning({ lid: channelLidPhones.lid, phone: channelLidPhones.phone });
  if (stored.length === 0) return;
  for (const s of stored) knownPhones.forget(s.lid);
  await moveStrikesToPhones(db, channelId, stored);
  // A new pairing may make a LID member of the channel's launches a buyer: after it is stored, never before.
  await touchBuyersOfChannel(db, channelId);
}

/**
 * Moderation's strikes a LID earned in the channel's launches before its number was known become the number's (one
 * person, one count; docs/moderation.md#a-member-known-only-by-a-lid), in one statement. Added to the number's own; a sum
 * that would pass `strikes_to_remove` without either part having reached it stops one short, so the person's next
 * offence removes them (a removal is only ever made by an offence).
 */
async function moveStrikesToPhones(db: Db | Tx, channelId: string, pairs: LidPhone[]) {
  const values = pairs.map((p) => sql`(${p.lid}::text, ${phoneKey(p.phone)}::text)`);
  await db.execute(sql`with pairs(lid, person) as (values ${sql.join(values, sql`, `)}),
    moved as (
      delete from moderation_strikes s using launches l, pairs v
      where s.launch_id = l.id and s.person = v.lid and l.channel_ids @> jsonb_build_array(${channelId}::text)
      returning s.launch_id, v.person, s.strikes, s.last_at
    )
    insert into moderation_strikes as s (launch_id, person, strikes, last_at)
    select launch_id, person, sum(strikes)::int, max(last_at) from moved group by launch_id, person
    on conflict (launch_id, person) do update set
      strikes = case
        when greatest(s.strikes, excluded.strikes) >= (select (l.moderation->>'strikes_to_remove')::int from launches l where l.id = s.launch_id)
          then s.strikes + excluded.strikes
        else least(s.strikes + excluded.strikes, (select (l.moderation->>'strikes_to_remove')::int - 1 from launches l where l.id = s.launch_id))
      end,
      last_at = greatest(s.last_at, excluded.last_at)`);
}

/** The phone the given channels last paired this LID with. */
export async function phoneOfLid(db: Db | Tx, channelIds: string[], lid: string): Promise<string | undefined> {
  if (channelIds.length === 0) return undefined;
  const [row] = await db
    .select({ phone: channelLidPhones.phone })
    .from(channelLidPhones)
    .where(and(eq(channelLidPhones.lid, lid), inArray(channelLidPhones.channelId, channelIds)))
    .orderBy(desc(channelLidPhones.learnedAt))
    .limit(1);
  return row?.phone;
}

/** Per LID, per set of channels: the phone paired (or none); forgotten when this process stores a pairing of the LID. */
const knownPhones = new ForgettableCache<string | undefined>("lidPhones", 50_000);
/** A pairing is kept a while (a LID's number does not change); "not paired" only briefly (another process may learn it). */
const pairedTtlMs = 5 * 60_000;
const unpairedTtlMs = 2000;

/** phoneOfLid, remembered: moderation asks it for every message a LID alone sent (docs/moderation.md#a-member-known-only-by-a-lid). */
export function knownPhoneOfLid(db: Db, channelIds: string[], lid: string): Promise<string | undefined> {
  return knownPhones.get(
    lid,
    channelIds.join(","),
    () => phoneOfLid(db, channelIds, lid),
    (phone) => (phone ? pairedTtlMs : unpairedTtlMs),
  );
}

/** A launch's view of the pairings: only what its own channels learned (never another tenant's). */
export class LaunchPairs {
  /** LID → phone number. */
  readonly phoneOf = new Map<string, string>();

  /** The id a participant is recorded under: its phone number when known. */
  canonical(participant: string) {
    return (isLid(participant) && this.phoneOf.get(participant)) || participant;
  }
}

/** Launches that know no pairing: everyone is recorded as they came. */
export const noPairs = (launchIds: Iterable<string>) => new Map([...launchIds].map((id) => [id, new LaunchPairs()]));

/**
 * The pairings the given channels learned that concern these ids (as a LID or as a phone number), one
 * LaunchPairs per launch, built from its channels' pairings only.
 */
export async function pairsFor(tx: Tx, launches: Map<string, string[]>, ids: Iterable<string>): Promise<Map<string, LaunchPairs>> {
  const all = [...new Set(ids)];
  const lids = all.filter(isLid);
  const phones = all.filter((p) => !isLid(p));
  const channelIds = [...new Set([...launches.values()].flat())];
  const out = noPairs(launches.keys());
  if (channelIds.length === 0 || all.length === 0) return out;
  const rows = await tx
    .select()
    .from(channelLidPhones)
    .where(
      and(
        inArray(channelLidPhones.channelId, channelIds),
        or(lids.length ? inArray(channelLidPhones.lid, lids) : undefined, phones.length ? inArray(channelLidPhones.phone, phones) : undefined),
      ),
    )
    .orderBy(channelLidPhones.learnedAt);
  for (const [launchId, channels] of launches) {
    const mine = out.get(launchId)!;
    for (const r of rows) if (channels.includes(r.channelId)) mine.phoneOf.set(r.lid, r.phone);
  }
  return out;
}

/** What the membership logic reads of a launch_participants row. */
export const rowColumns = {
  id: launchParticipants.id,
  launchId: launchParticipants.launchId,
  groupId: launchParticipants.groupId,
  participant: launchParticipants.participant,
  joinedAt: launchParticipants.joinedAt,
  leftAt: launchParticipants.leftAt,
};

type Key = string;
const keyOf = (launchId: string, groupId: string) => `${launchId}\n${groupId}`;

/**
 * Moves the launches' rows recorded under a LID to the phone number it stands for (staff judged again by
 * the number), then folds what describes one person twice in a group:
 * - two open rows (one membership seen under both ids): the later one goes, with the member it added;
 * - two early leaves (one leave seen under both ids): the later one stays, the other gives its member back;
 * - an early leave and an open row older than it (a join by LID, its leave by phone before the pairing was
 *   known): the row closes at that leave, which had already taken the member;
 * - an early leave after a membership already closed: that exit was counted: it goes and gives its member
 *   back (an early leave older than anything seen of them stays: they were there before the adoption).
 * Call inside the transaction that locked the launches. Returns the change of `members` per group.
 */
export async function foldAliases(
  tx: Tx,
  pairs: Map<string, LaunchPairs>,
  isStaff: (launchId: string, participant: string) => boolean,
): Promise<{ launchId: string; groupId: string; delta: number }[]> {
  const launchIds = [...pairs.keys()].filter((id) => pairs.get(id)!.phoneOf.size > 0);
  const lids = [...new Set(launchIds.flatMap((id) => [...pairs.get(id)!.phoneOf.keys()]))];
  if (lids.length === 0) return [];
  const phoneIn = (launchId: string, lid: string) => pairs.get(launchId)?.phoneOf.get(lid);
  const aliasRows = (
    await tx
      .select({ id: launchParticipants.id, launchId: launchParticipants.launchId, participant: launchParticipants.participant })
      .from(launchParticipants)
      .where(and(inArray(launchParticipants.launchId, launchIds), inArray(launchParticipants.participant, lids)))
  ).filter((r) => phoneIn(r.launchId, r.participant));
  const aliasLeaves = (
    await tx
      .select()
      .from(launchEarlyLeaves)
      .where(and(inArray(launchEarlyLeaves.launchId, launchIds), inArray(launchEarlyLeaves.participant, lids)))
  ).filter((r) => phoneIn(r.launchId, r.participant));
  if (aliasRows.length === 0 && aliasLeaves.length === 0) return [];

  if (aliasRows.length > 0) {
    const values = aliasRows.map((r) => {
      const phone = phoneIn(r.launchId, r.participant)!;
      return sql`(${r.id}::bigint, ${phone}::text, ${isStaff(r.launchId, phone)}::boolean)`;
    });
    await tx.execute(sql`update launch_participants p set participant = v.phone, staff = v.staff
      from (values ${sql.join(values, sql`, `)}) as v(id, phone, staff) where p.id = v.id`);
  }

  // Everything the moved people now have in the launches, to fold per group.
  const phones = [...new Set([...aliasRows.map((r) => phoneIn(r.launchId, r.participant)!), ...aliasLeaves.map((r) => phoneIn(r.launchId, r.participant)!)])];
  const rows = await tx
    .select(rowColumns)
    .from(launchParticipants)
    .where(and(inArray(launchParticipants.launchId, launchIds), inArray(launchParticipants.participant, phones)));
  const phoneLeaves = await tx
    .select()
    .from(launchEarlyLeaves)
    .where(and(inArray(launchEarlyLeaves.launchId, launchIds), inArray(launchEarlyLeaves.participant, phones)));

  type Leave = { participant: string; leftAt: Date };
  const people = new Map<string, { launchId: string; groupId: string; phone: string; rows: typeof rows; leaves: Leave[] }>();
  const person = (launchId: string, groupId: string, phone: string) => {
    const k = `${keyOf(launchId, groupId)}\n${phone}`;
    let p = people.get(k);
    if (!p) {
      p = { launchId, groupId, phone, rows: [], leaves: [] };
      people.set(k, p);
    }
    return p;
  };
  for (const r of rows) person(r.launchId, r.groupId, r.participant).rows.push(r);
  for (const l of phoneLeaves) person(l.launchId, l.groupId, l.participant).leaves.push(l);
  for (const l of aliasLeaves) person(l.launchId, l.groupId, phoneIn(l.launchId, l.participant)!).leaves.push(l);

  const deltas = new Map<Key, { launchId: string; groupId: string; delta: number }>();
  const move = (launchId: string, groupId: string, by: number) => {
    const d = deltas.get(keyOf(launchId, groupId)) ?? { launchId, groupId, delta: 0 };
    d.delta += by;
    deltas.set(keyOf(launchId, groupId), d);
  };
  const deleteRows: number[] = [];
  const closeRows: { id: number; at: Date }[] = [];
  const deleteLeaves: { launchId: string; groupId: string; participant: string }[] = [];
  const putLeaves: (typeof launchEarlyLeaves.$inferInsert)[] = [];

  for (const p of people.values()) {
    const open = p.rows.filter((r) => r.leftAt === null).sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime());
    for (const extra of open.slice(1)) {
      deleteRows.push(extra.id);
      move(p.launchId, p.groupId, -1);
    }
    if (p.leaves.length === 0) continue;
    const leaves = [...p.leaves].sort((a, b) => a.leftAt.getTime() - b.leftAt.getTime());
    const kept = leaves.at(-1)!;
    move(p.launchId, p.groupId, leaves.length - 1);
    for (const l of leaves) deleteLeaves.push({ launchId: p.launchId, groupId: p.groupId, participant: l.participant });
    const row = open[0];
    if (row && row.joinedAt <= kept.leftAt) closeRows.push({ id: row.id, at: kept.leftAt });
    // Their leave after a join already closed: that exit is counted (or its re-join was never seen).
    else if (p.rows.some((r) => r.leftAt !== null && r.joinedAt <= kept.leftAt)) move(p.launchId, p.groupId, 1);
    // Older than anything seen of them in the group: they were there before it was adopted.
    else putLeaves.push({ launchId: p.launchId, groupId: p.groupId, participant: p.phone, leftAt: kept.leftAt });
  }

  if (deleteRows.length > 0) await tx.delete(launchParticipants).where(inArray(launchParticipants.id, deleteRows));
  if (closeRows.length > 0) {
    const values = closeRows.map((c) => sql`(${c.id}::bigint, ${tsParam(c.at)})`);
    await tx.execute(sql`update launch_participants p set left_at = v.at from (values ${sql.join(values, sql`, `)}) as v(id, at) where p.id = v.id`);
  }
  for (const l of deleteLeaves) {
    await tx
      .delete(launchEarlyLeaves)
      .where(and(eq(launchEarlyLeaves.launchId, l.launchId), eq(launchEarlyLeaves.groupId, l.groupId), eq(launchEarlyLeaves.participant, l.participant)));
  }
  if (putLeaves.length > 0) await tx.insert(launchEarlyLeaves).values(putLeaves).onConflictDoNothing();
  return [...deltas.values()].filter((d) => d.delta !== 0);
}
