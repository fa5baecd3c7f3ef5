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
 * the message again. A message breaking no rule is one statement.
 * Cheap (a few indexed statements), so it runs in the inbound handler; the deletions and removals themselves run in the
 * group-action engine, never on a campaign's send path.
 */
import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
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
} from "../../db/schema";
import { recordAudit, systemActor } from "../audit/record-audit";
import { createFixedAction, createFixedRemoval } from "../groups/actions/fixed-removal";
import { protectedKeys } from "../launches/funnel/buyers-in-groups";
import type { Launch } from "../launches/launch/find-launch";
import { storePairs } from "../groups/members/lid-phones";
import { onLaunchWake } from "../launches/launch/wake";
import type { MessagingProvider, ProviderEvent } from "../messaging/provider";
import { participantKey } from "../phones/phone";
import { excerptOf, textRuleBroken } from "./message-rules";

type GroupMessage = Extract<ProviderEvent, { type: "group_message" }>;
type Rule = "link" | "banned_word" | "flood";

/** The group's admins as the platform lists them, per channel and group, read again after this long. */
const adminsTtlMs = 5 * 60_000;
const admins = new Map<string, { keys: Set<string>; until: number }>();

async function groupAdmins(provider: Pick<MessagingProvider, "groupSettings">, channelId: string, groupId: string): Promise<Set<string>> {
  const key = `${channelId} ${groupId}`;
  const known = admins.get(key);
  if (known && known.until > Date.now()) return known.keys;
  // Unreadable now: nobody more is exempt for half a minute (the account's numbers, template admins and staff still are).
  const settings = await provider.groupSettings(channelId, groupId).catch(() => undefined);
  const keys = new Set((settings?.admins ?? []).map((a) => participantKey(a)));
  if (admins.size > 10_000) admins.clear();
  admins.set(key, { keys, until: Date.now() + (settings ? adminsTtlMs : 30_000) });
  return keys;
}

/**
 * Which moderated launch holds a group, remembered a little (a busy group's every message would ask): forgotten at once
 * when this process edits or wakes a launch (its settings, its groups), and after 2 s in any case (another process's edit).
 */
const heldTtlMs = 2000;
const held = new Map<string, { launch: Launch | undefined; until: number }>();
onLaunchWake((launchId) => {
  for (const [key, v] of held) if (!v.launch || v.launch.id === launchId) held.delete(key);
});

/** The moderated launch holding the group, reached by the channel's account (the oldest when two hold it). */
async function moderatedLaunch(db: Db, channelId: string, groupId: string): Promise<Launch | undefined> {
  const key = `${channelId} ${groupId}`;
  const known = held.get(key);
  if (known && known.until > Date.now()) return known.launch;
  const launch = await readModeratedLaunch(db, channelId, groupId);
  if (held.size > 10_000) held.clear();
  held.set(key, { launch, until: Date.now() + heldTtlMs });
  return launch;
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
  const launch = await moderatedLaunch(db, event.channelId, event.groupId);
  if (!launch) return [];
  if (event.pairs?.length) await storePairs(db, event.channelId, event.pairs, now);
  const paired = new Map((event.pairs ?? []).map((p) => [p.lid, p.phone]));
  const person = participantKey(event.sender, (lid) => paired.get(lid));
  const settings = launch.moderation;
  const at = event.at;
  let rule: Rule | null = textRuleBroken(settings, event.text);
  if (!rule && settings.max_messages_per_minute !== null) {
    const [recent] = await db
      .select({ n: count() })
      .from(groupMessages)
      .where(and(eq(groupMessages.groupId, event.groupId), eq(groupMessages.person, person), gt(groupMessages.at, new Date(at.getTime() - 60_000))));
    if ((recent?.n ?? 0) + 1 > settings.max_messages_per_minute) rule = "flood";
  }
  const exempt = rule !== null && (await isExempt(db, provider, launch, event, person));
  const excerpt = excerptOf(event.text);
  // The participant as the group lists them: the number when known, else the LID.
  const participant = person.includes("@") ? event.sender : (paired.get(event.sender) ?? event.sender);
  const record = (q: Db | Tx) =>
    q
      .insert(groupMessages)
      .values({
        groupId: event.groupId,
        messageId: event.messageId,
        sender: event.sender,
        person,
        excerpt,
        verdict: rule === null ? "clean" : exempt ? "exempt" : rule,
        at,
      })
      .onConflictDoNothing()
      .returning({ id: groupMessages.id });
  // Nothing to decide: one statement (a redelivery conflicts and changes nothing).
  if (rule === null || exempt) {
    await record(db);
    return [];
  }
  return db.transaction(async (tx) => {
    const [row] = await record(tx);
    // Judged already (a redelivery, or the same message through another channel in the group).
    if (!row) return [];
    return decide(tx, launch, settings, { event, rule, participant, person, excerpt }, now);
  });
}

async function isExempt(db: Db, provider: Pick<MessagingProvider, "groupSettings">, launch: Launch, event: GroupMessage, person: string) {
  if ((await protectedKeys(db, launch)).includes(person)) return true;
  return (await groupAdmins(provider, event.channelId, event.groupId)).has(person);
}

interface Offence {
  event: GroupMessage;
  rule: Rule;
  participant: string;
  person: string;
  excerpt: string;
}

/** The decisions on one offence, in the message's transaction: events, the strike, the engine's actions. */
async function decide(tx: Tx, launch: Launch, settings: LaunchModerationSettings, o: Offence, now: Date): Promise<string[]> {
  const enforce = settings.mode === "enforce";
  const base = { launchId: launch.id, groupId: o.event.groupId, participant: o.participant, rule: o.rule, at: now };
  const made: string[] = [];
  let deleteAction: string | null = null;
  if (enforce) {
    deleteAction = await queueDeletion(tx, launch, o.event.groupId, { id: o.event.messageId, sender: o.event.senderId ?? o.event.sender }, now);
    made.push(deleteAction);
    await recordAudit(tx, { tenantId: launch.tenantId, actor: systemActor, action: "moderation.delete_message", target: o.participant, at: now });
  }
  await tx.insert(moderationEvents).values({
    ...base,
    action: enforce ? "deleted" : "would_delete",
    excerpt: o.excerpt,
    dedupe: `msg:${o.event.groupId}:${o.event.messageId}`,
    actionId: deleteAction,
  });
  const strikes = enforce ? await strike(tx, launch.id, o.person, now) : await shadowStrikes(tx, launch.id, o.participant);
  if (strikes !== settings.strikes_to_remove) return made;
  let removal: string | null = null;
  if (enforce) {
    removal = await createFixedRemoval(tx, launch, "Moderação: remoção por infrações", [o.event.groupId], [o.participant], now);
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

/** One more strike for the person within the launch; answers their strikes now. */
async function strike(tx: Tx, launchId: string, person: string, now: Date): Promise<number> {
  const [row] = await tx
    .insert(moderationStrikes)
    .values({ launchId, person, strikes: 1, lastAt: now })
    .onConflictDoUpdate({
      target: [moderationStrikes.launchId, moderationStrikes.person],
      set: { strikes: sql`${moderationStrikes.strikes} + 1`, lastAt: now },
    })
    .returning({ strikes: moderationStrikes.strikes });
  return row.strikes;
}

/** Shadow keeps no strikes: the person's `would_delete` decisions in the launch, this one included, count instead. */
async function shadowStrikes(tx: Tx, launchId: string, participant: string): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(moderationEvents)
    .where(and(eq(moderationEvents.launchId, launchId), eq(moderationEvents.participant, participant), eq(moderationEvents.action, "would_delete")));
  return row?.n ?? 0;
}
