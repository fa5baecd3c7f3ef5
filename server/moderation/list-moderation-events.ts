import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { moderationEvents } from "../../db/schema";
import { findOwnedLaunch } from "../launches/launch/find-launch-owned";
import { toBrasiliaIso } from "../time/brasilia";

const perPage = 100;

/** The launch's moderation decisions, newest first, 100 a page; `cursor` is the previous page's next_cursor. */
export async function listModerationEvents(db: Db, tenantId: string, launchId: string, cursor?: string) {
  await findOwnedLaunch(db, tenantId, launchId);
  const rows = await db
    .select()
    .from(moderationEvents)
    .where(and(eq(moderationEvents.launchId, launchId), cursor ? lt(moderationEvents.id, Number(cursor)) : undefined))
    .orderBy(desc(moderationEvents.id))
    .limit(perPage + 1);
  const page = rows.slice(0, perPage);
  return {
    events: page.map((r) => ({
      at: toBrasiliaIso(r.at),
      id_group: r.groupId,
      participant: r.participant,
      rule: r.rule,
      action: r.action,
      excerpt: r.excerpt,
    })),
    next_cursor: rows.length > perPage ? String(page[page.length - 1].id) : null,
  };
}
