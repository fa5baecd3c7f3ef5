/**
 * The hourly check of every launch group's invite link (docs/decisions.md#members): the link read from
 * the platform replaces a stored one that was revoked (WhatsApp makes a new code when an admin revokes
 * the old one); a group that vanished, or where the channel's number lost admin, becomes `broken`,
 * leaves the rotation (the next group fills) and a `link_broken` event says why. A channel that cannot
 * answer now (offline, gateway down) is skipped and asked again on the next run.
 */
import { and, asc, eq, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launches, launchGroups } from "../../db/schema";
import { env } from "../env";
import type { MessagingProvider } from "../messaging/provider";
import { recordGroupActivity } from "./group-activity";
import { applyGroupStatuses, lockLaunch } from "./record-participants";
import { wakeLaunch } from "./wake";

export interface InviteCheckResult {
  checked: number;
  renewed: number;
  broken: number;
  skipped: number;
}

type Checker = Pick<MessagingProvider, "groupState" | "inviteUrl">;

/** Checks the groups not checked for LAUNCH_INVITE_CHECK_SECONDS (all of them with `all`), of launches not closed. */
export async function checkInviteLinks(db: Db, provider: Checker, now: Date, opts: { all?: boolean; limit?: number } = {}): Promise<InviteCheckResult> {
  const due = new Date(now.getTime() - env.launchFunnel.inviteCheckSeconds * 1000);
  const groups = await db
    .select({
      launchId: launchGroups.launchId,
      tenantId: launches.tenantId,
      position: launchGroups.position,
      groupId: launchGroups.groupId,
      channelId: launchGroups.channelId,
      inviteUrl: launchGroups.inviteUrl,
    })
    .from(launchGroups)
    .innerJoin(launches, eq(launches.id, launchGroups.launchId))
    .where(
      and(
        ne(launches.status, "closed"),
        ne(launchGroups.status, "broken"),
        opts.all ? undefined : or(isNull(launchGroups.inviteCheckedAt), lt(launchGroups.inviteCheckedAt, due)),
      ),
    )
    // Never-checked groups first, then the longest unchecked.
    .orderBy(sql`${launchGroups.inviteCheckedAt} asc nulls first`, asc(launchGroups.launchId), asc(launchGroups.position))
    .limit(opts.limit ?? 500);
  const result: InviteCheckResult = { checked: 0, renewed: 0, broken: 0, skipped: 0 };
  for (const g of groups) {
    const where = and(eq(launchGroups.launchId, g.launchId), eq(launchGroups.position, g.position));
    let state: Awaited<ReturnType<Checker["groupState"]>>;
    let url: string | null = null;
    try {
      state = await provider.groupState(g.channelId, g.groupId);
      if (state.exists && state.admin) url = await provider.inviteUrl(g.channelId, g.groupId);
    } catch (err) {
      console.warn(`[launches] invite check of ${g.groupId} skipped:`, err instanceof Error ? err.message : err);
      result.skipped++;
      continue;
    }
    result.checked++;
    if (!state.exists || !state.admin) {
      const reason = state.exists ? "not_admin" : "group_gone";
      await db.transaction(async (tx) => {
        await lockLaunch(tx, g.launchId);
        const [marked] = await tx
          .update(launchGroups)
          .set({ status: "broken", brokenReason: reason, inviteCheckedAt: now })
          .where(and(where, ne(launchGroups.status, "broken")))
          .returning({ p: launchGroups.position });
        if (!marked) return;
        await recordGroupActivity(tx, g.tenantId, { event: "link_broken", id_launch: g.launchId, id_group: g.groupId, reason }, now);
        await applyGroupStatuses(tx, g.launchId, g.tenantId, now);
      });
      result.broken++;
      wakeLaunch(g.launchId);
      continue;
    }
    const renewed = url !== null && url !== g.inviteUrl;
    await db
      .update(launchGroups)
      .set(renewed ? { inviteUrl: url, inviteCheckedAt: now } : { inviteCheckedAt: now })
      .where(where);
    if (renewed) result.renewed++;
  }
  return result;
}
