/**
 * Moderation at join (CONTRACT §9; docs/moderation.md#joins): in a launch whose moderation is `shadow` or `enforce`, a
 * member who joins from a number on the account's blocklist, or outside the launch's `country_codes`, is removed at
 * once (enforce: a group action of type remove through the engine, an event `removed`) or recorded as `would_remove`
 * (shadow). Never the launch's staff, the template's admins or the account's own numbers. A decision is made once per
 * join (its launch_participants row): a redelivered participant event decides nothing twice.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJson, rowsOf } from "../../db/params";
import { launches, launchGroups, moderationEvents } from "../../db/schema";
import { createFixedRemoval } from "../groups/actions/fixed-removal";
import { participantKey } from "../launches/funnel/buyer-figures";
import { protectedKeys } from "../launches/funnel/buyers-in-groups";
import { blockedKeys } from "./blocklist";

interface Joined {
  groupId: string;
  participants: string[];
  /** LID ⇄ phone pairings the event carried (a LID's row may have moved to the number already). */
  pairs?: { lid: string; phone: string }[];
}

/** Judges the joins of one participant event; answers the group actions made (wake them). */
export async function moderateJoins(db: Db, event: Joined, now: Date): Promise<string[]> {
  const held = await db
    .select({ launch: launches })
    .from(launchGroups)
    .innerJoin(launches, eq(launches.id, launchGroups.launchId))
    .where(and(eq(launchGroups.groupId, event.groupId), sql`${launches.moderation}->>'mode' in ('shadow', 'enforce')`));
  const made: string[] = [];
  const ids = [...new Set([...event.participants, ...(event.pairs ?? []).map((p) => p.phone)])];
  for (const { launch } of held) {
    const rows = rowsOf<{ id: number; participant: string; person_key: string | null }>(
      await db.execute(sql`select p.id, p.participant, (${participantKey(launch.channelIds)}) as person_key from launch_participants p
        where p.launch_id = ${launch.id} and p.id_group = ${event.groupId} and p.left_at is null and not p.staff
          and ${inJson(sql`p.participant`, ids)}`),
    );
    const keyed = rows.filter((r): r is typeof r & { person_key: string } => r.person_key !== null && !r.person_key.includes("@"));
    if (keyed.length === 0) continue;
    const exempt = new Set(await protectedKeys(db, launch));
    const blocked = await blockedKeys(
      db,
      launch.tenantId,
      keyed.map((r) => r.person_key),
    );
    const codes = launch.moderation.country_codes;
    type Rule = "blocklist" | "country_code";
    const decisions = keyed.flatMap((r): { row: (typeof keyed)[number]; rule: Rule }[] => {
      if (exempt.has(r.person_key)) return [];
      if (blocked.has(r.person_key)) return [{ row: r, rule: "blocklist" }];
      if (codes && !codes.some((c) => r.person_key.startsWith(c))) return [{ row: r, rule: "country_code" }];
      return [];
    });
    if (decisions.length === 0) continue;
    const enforce = launch.moderation.mode === "enforce";
    const action = await db.transaction(async (tx) => {
      const fresh = await tx
        .insert(moderationEvents)
        .values(
          decisions.map((d) => ({
            launchId: launch.id,
            groupId: event.groupId,
            participant: d.row.participant,
            rule: d.rule,
            action: enforce ? ("removed" as const) : ("would_remove" as const),
            dedupe: `join:${d.row.id}`,
            at: now,
          })),
        )
        .onConflictDoNothing()
        .returning({ id: moderationEvents.id, participant: moderationEvents.participant });
      if (!enforce || fresh.length === 0) return null;
      const id = await createFixedRemoval(
        tx,
        launch,
        "Moderação: remoção na entrada",
        [event.groupId],
        fresh.map((f) => f.participant),
        now,
      );
      await tx
        .update(moderationEvents)
        .set({ actionId: id })
        .where(
          inArray(
            moderationEvents.id,
            fresh.map((f) => f.id),
          ),
        );
      return id;
    });
    if (action) made.push(action);
  }
  return made;
}
