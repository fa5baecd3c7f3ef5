/**
 * Moderation of the messages members post (CONTRACT §9; docs/moderation.md#messages). In a launch whose moderation is
 * `shadow` or `enforce` and that holds the group, a member's message that breaks a rule — a link outside the allow-list,
 * a banned word, more than `max_messages_per_minute` in a rolling minute — is, in `enforce`, deleted for everyone (a
 * group action `delete_message` through the engine: admin numbers, pace, failover) and gives its sender a strike; at
 * `strikes_to_remove` strikes within the launch they are removed (a group action `remove`, event `removed`). In `shadow`
 * the same decisions are `would_delete` / `would_remove` and nothing is done. Never judged: the group's admins, the
 * account's numbers, the template's admins and the launch's staff.
 *
 * Recorded with its decisions in one transaction, keyed by the platform's message id: a redelivered message conflicts
 * with its row and decides nothing twice; a failure leaves nothing, so the caller answers the gateway 5xx and it sends
 * the message again. It runs in the inbound handler, beside a campaign's statements on the same database (PGlite: the
 * one connection), so a message costs as few statements as can be (docs/benchmarks.md#moderation): one for a message
 * breaking no rule (recorded and its sender's minute counted together, no transaction); four for an offence (begin,
 * the message, its deletion queued, the event + strike + audit entry; commit). The launch and who is exempt are read
 * from memory. The deletions and removals themselves run in the group-action engine, never on a campaign's send path.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import { rowsOf } from "../../db/params";
import type { Db, Tx } from "../../db/client";
import {
  groupActionGroups,
  groupActions,
  groupMessages,
  type LaunchModerationSettings,
  launches,
  launchGroups,
  moderationEvents,
  moderationStrikes,
  type moderationVerdicts,
} from "../../db/schema";
import { auditInsert, recordAudit, systemActor } from "../audit/record-audit";
import { createFixedAction, createFixedRemoval } from "../groups/actions/fixed-removal";
import { protectedKeys } from "../launches/funnel/buyers-in-groups";
import type { Launch } from "../launches/launch/find-launch";
import { groupAdmins } from "../groups/members/group-admins";
import { knownPhoneOfLid, storePairs } from "../groups/members/lid-phones";
import { onLaunchWake } from "../launches/launch/wake";
import type { MessagingProvider, ProviderEvent } from "../messaging/provider";
import { isLid, participantKey } from "../phones/phone";
import { excerptOf, textRuleBroken } from "./message-rules";

type GroupMessage = Extract<ProviderEvent, { type: "group_message" }>;
type Rule = "link" | "banned_word" | "flood";

/**
 * Which moderated launch holds a group, remembered a little (a busy group's every message would ask): forgotten at once
 * when this process edits or wakes a launch (its settings, its groups), and after 2 s in any case (another process's edit).
 */
const heldTtlMs = 2000;
interface Held {
  launch: Launch;
  /** The launch's protected match keys (staff, template admins, the account's numbers), read at the first offence. */
  protectedKeys?: Promise<Set<string>>;
}
const held = new Map<string, { held: Held | undefined; until: number }>();
onLaunchWake((launchId) => {
  for (const [key, v] of held) if (!v.held || v.held.launch.id === launchId) held.delete(key);
});

/** The moderated launch holding the group, reached by the channel's account (the oldest when two hold it). */
async function moderatedLaunch(db: Db, channelId: string, groupId: string): Promise<Held | undefined> {
  const key = `${channelId} ${groupId}`;
  const known = held.get(key);
  if (known && known.until > Date.now()) return known.held;
  const launch = await readModeratedLaunch(db, channelId, groupId);
  if (held.size > 10_000) held.clear();
  const entry = { held: launch && { launch }, until: Date.now() + heldTtlMs };
  held.set(key, entry);
  return entry.held;
}

async function readModeratedLaunch(db: Db, channelId: string, groupId: string): Promise<Launch | undefined> {
  const [row] = await db
    .select({ launch: launches })
    .from(launchGroups)
    .innerJoin(launches, eq(launches.id, launchGroups.launchId))
    .where(
      and(
        eq(launchGroups.groupId, groupId),
        sql`${launches.moderation}->>'mode' in ('shadow', 'enforce')`,
        sql`${launches.tenantId} = (select tenant_id from channels where id = ${channelId})`,
      ),
    )
    .orderBy(launches.createdAt)
    .limit(1);
  return row?.launch;
}

/** Judges one inbound group message; answers the group actions made (wake them after the call). */
export async function moderateMessage(db: Db, provider: Pick<MessagingProvider, "groupSettings">, event: GroupMessage, now: Date): Promise<string[]> {
  const found = await moderatedLaunch(db, event.channelId, event.groupId);
  if (!found) return [];
  const { launch } = found;
  if (event.pairs?.length) await storePairs(db, event.channelId, event.pairs, now);
  const paired = new Map((event.pairs ?? []).map((p) => [p.lid, p.phone]));
  // A LID alone (no participantAlt): the person's number when the launch's channels paired it already (one strike count).
  if (isLid(event.sender) && !paired.has(event.sender)) {
    const phone = await knownPhoneOfLid(db, launch.channelIds, event.sender);
    if (phone) paired.set(event.sender, phone);
  }
  const person = participantKey(event.sender, (lid) => paired.get(lid));
  const settings = launch.moderation;
  const message = { event, person, excerpt: excerptOf(event.text) };
  let rule: Rule | null = textRuleBroken(settings, event.text);
  if (!rule) {
    // One statement, no transaction: recorded `clean`, unless it floods (its sender's minute counted in the same statement).
    if (settings.max_messages_per_minute === null) {
      await recordMessage(db, message, "clean");
      return [];
    }
    if (await recordUnlessFlood(db, message, settings.max_messages_per_minute)) return [];
    rule = "flood";
  }
  if (await isExempt(db, found, provider, event, person)) {
    await recordMessage(db, message, "exempt");
    return [];
  }
  // The participant as the group lists them: the number when known, else the LID.
  const participant = person.includes("@") ? event.sender : (paired.get(event.sender) ?? event.sender);
  const offence: Offence = { event, rule, participant, person, excerpt: message.excerpt };
  return db.transaction(async (tx) => {
    const [row] = await recordMessage(tx, message, rule);
    // Judged already (a redelivery, or the same message through another channel in the group).
    if (!row) return [];
    return decide(tx, launch, settings, offence, now);
  });
}

interface Message {
  event: GroupMessage;
  person: string;
  excerpt: string;
}

/** Records the message with its verdict; answers its row, none when it was recorded already (a redelivery). */
function recordMessage(q: Db | Tx, m: Message, verdict: (typeof moderationVerdicts)[number]) {
  return q
    .insert(groupMessages)
    .values({ groupId: m.event.groupId, messageId: m.event.messageId, sender: m.event.sender, person: m.person, excerpt: m.excerpt, verdict, at: m.event.at })
    .onConflictDoNothing()
    .returning({ id: groupMessages.id });
}

/**
 * A message breaking no text rule, in one statement: its sender's messages in the group in the minute before it are
 * counted, and it is recorded `clean` when it stays within `max` (or it was recorded already: a redelivery). Answers
 * false when it floods: then nothing is recorded, and the caller judges it as an offence.
 */
async function recordUnlessFlood(db: Db, m: Message, max: number): Promise<boolean> {
  const since = new Date(m.event.at.getTime() - 60_000).toISOString();
  const [row] = rowsOf<{ recent: number }>(
    await db.execute(sql`with recent as (
        select count(*)::int as n from ${groupMessages}
        where ${groupMessages.groupId} = ${m.event.groupId} and ${groupMessages.person} = ${m.person} and ${groupMessages.at} > ${since}::timestamptz
      ), recorded as (
        insert into ${groupMessages} (id_group, message_id, sender, person, excerpt, verdict, at)
        select ${m.event.groupId}, ${m.event.messageId}, ${m.event.sender}, ${m.person}, ${m.excerpt}, 'clean', ${m.event.at.toISOString()}::timestamptz
        from recent where n + 1 <= ${max}
        on conflict do nothing
      )
      select n as recent from recent`),
  );
  return Number(row?.recent ?? 0) + 1 <= max;
}

/** Never judged: the launch's staff, the template's admins, the account's numbers (read once per cached launch), the group's admins. */
async function isExempt(db: Db, found: Held, provider: Pick<MessagingProvider, "groupSettings">, event: GroupMessage, person: string) {
  found.protectedKeys ??= protectedKeys(db, found.launch).then(
    (keys) => new Set(keys),
    (err: unknown) => {
      found.protectedKeys = undefined;
      throw err;
    },
  );
  if ((await found.protectedKeys).has(person)) return true;
  return (await groupAdmins(provider, event.channelId, event.groupId)).has(person);
}

interface Offence {
  event: GroupMessage;
  rule: Rule;
  participant: string;
  person: string;
  excerpt: string;
}

/**
 * The decisions on one offence, in the message's transaction: the deletion queued to the engine (enforce), then in one
 * statement its event, the strike (shadow keeps none: its `would_delete` events count) and the audit entry; at
 * `strikes_to_remove` the removal.
 */
async function decide(tx: Tx, launch: Launch, settings: LaunchModerationSettings, o: Offence, now: Date): Promise<string[]> {
  const enforce = settings.mode === "enforce";
  const base = { launchId: launch.id, groupId: o.event.groupId, participant: o.participant, rule: o.rule, at: now };
  const made: string[] = [];
  let deleteAction: string | null = null;
  if (enforce) {
    deleteAction = await queueDeletion(tx, launch, o.event.groupId, { id: o.event.messageId, sender: o.event.senderId ?? o.event.sender }, now);
    made.push(deleteAction);
  }
  const deleted = tx.insert(moderationEvents).values({
    ...base,
    action: enforce ? "deleted" : "would_delete",
    excerpt: o.excerpt,
    dedupe: `msg:${o.event.groupId}:${o.event.messageId}`,
    actionId: deleteAction,
  });
  const [row] = rowsOf<{ strikes: number }>(
    await tx.execute(
      enforce
        ? sql`with deleted as (${deleted.getSQL()}), audit as (${auditInsert(tx, { tenantId: launch.tenantId, actor: systemActor, action: "moderation.delete_message", target: o.participant, at: now }).getSQL()})
            ${tx
              .insert(moderationStrikes)
              .values({ launchId: launch.id, person: o.person, strikes: 1, lastAt: now })
              .onConflictDoUpdate({
                target: [moderationStrikes.launchId, moderationStrikes.person],
                set: { strikes: sql`${moderationStrikes.strikes} + 1`, lastAt: now },
              })
              .returning({ strikes: moderationStrikes.strikes })
              .getSQL()}`
        : // The event inserted by the same statement is not seen by its select: counted as the one more.
          sql`with deleted as (${deleted.getSQL()})
            select count(*)::int + 1 as strikes from ${moderationEvents}
            where ${moderationEvents.launchId} = ${launch.id} and ${moderationEvents.participant} = ${o.participant} and ${moderationEvents.action} = 'would_delete'`,
    ),
  );
  if (Number(row?.strikes) !== settings.strikes_to_remove) return made;
  let removal: string | null = null;
  if (enforce) {
    // Named by every id known of them (the number, the LID): the group may list them by either; who is not listed is skipped.
    const lids = (o.event.pairs ?? []).filter((p) => participantKey(p.phone) === o.person).map((p) => p.lid);
    const who = [...new Set([o.participant, o.event.sender, ...lids])];
    removal = await createFixedRemoval(tx, launch, "Moderação: remoção por infrações", [o.event.groupId], who, now);
    made.push(removal);
    await recordAudit(tx, { tenantId: launch.tenantId, actor: systemActor, action: "moderation.remove", target: o.participant, at: now });
  }
  await tx.insert(moderationEvents).values({
    ...base,
    action: enforce ? "removed" : "would_remove",
    excerpt: o.excerpt,
    dedupe: `strikes:${o.event.groupId}:${o.event.messageId}`,
    actionId: removal,
  });
  return made;
}

/** A group's deletions wait this long for others to join them: a flood or a spam wave is one group action, not dozens. */
const deletionBatchMs = 1000;

/**
 * Queues a message's deletion: added to the group's deletion not started yet (scheduled, no engine holding it), or a new
 * `delete_message` action due in a second. Answers the action.
 */
async function queueDeletion(tx: Tx, launch: Launch, groupId: string, message: { id: string; sender: string }, now: Date): Promise<string> {
  const [joined] = await tx
    .update(groupActions)
    .set({ action: sql`jsonb_set(${groupActions.action}, '{messages}', (${groupActions.action}->'messages') || ${JSON.stringify([message])}::jsonb)` })
    .where(
      and(
        eq(groupActions.launchId, launch.id),
        eq(groupActions.status, "scheduled"),
        isNull(groupActions.leaseUntil),
        sql`${groupActions.action}->>'type' = 'delete_message'`,
        sql`exists (select 1 from ${groupActionGroups} g where g.action_id = ${groupActions.id} and g.id_group = ${groupId})`,
      ),
    )
    .returning({ id: groupActions.id });
  if (joined) return joined.id;
  const due = new Date(now.getTime() + deletionBatchMs);
  return createFixedAction(tx, launch, "Moderação: apagar mensagens", [groupId], { type: "delete_message", messages: [message] }, now, due);
}
