/**
 * launch-members (docs/decisions.md#launch-endpoints): one row per join (a re-join is a new row) with
 * the group, when the person joined and left, and whether they are staff. JSON in pages of 500, or the
 * whole list as one CSV file, streamed in keyset pages (server/launches/funnel/csv-export.ts) (UTF-8 with a BOM so spreadsheets read accents; `delimiter=semicolon` for
 * locales whose spreadsheets expect `;`). `buyer`: whether the person is one of the launch's buyers
 * (server/launches/funnel/buyer-figures.ts: a purchase approved and never refunded).
 */
import { and, asc, count, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { launchGroups, launchParticipants } from "../../../db/schema";
import { toBrasiliaIso } from "../../time/brasilia";
import type { FileStream } from "../../trpc";
import { csvPageRows, csvStream, fileAnswer } from "./csv-export";
import { anyPurchases, type BuyerScope, participantBought } from "./buyer-figures";
import { findOwnedLaunch } from "../launch/find-launch-owned";
import { membersPerPage } from "./stats-schema";

export interface LaunchMembersQuery {
  format: "json" | "csv";
  page: number;
  delimiter: "comma" | "semicolon";
}

const csvColumns = ["participant", "id_group", "group_name", "joined_at", "left_at", "staff", "buyer"] as const;

/** `scope` null: the account never had a purchase, nobody is a buyer. `after`: a keyset condition (the CSV's pages). */
function rowsOf(db: Db, launchId: string, scope: BuyerScope | null, after?: SQL) {
  return db
    .select({
      participant: launchParticipants.participant,
      id_group: launchParticipants.groupId,
      group_name: launchGroups.name,
      joined_at: launchParticipants.joinedAt,
      left_at: launchParticipants.leftAt,
      staff: launchParticipants.staff,
      // participantBought reads the row as `p`.
      buyer: (scope
        ? sql<boolean>`(select ${participantBought(scope)} from launch_participants p where p.id = ${launchParticipants.id})`
        : sql<boolean>`false`
      ).mapWith(Boolean),
      // The keyset cursor: the join time as PostgreSQL writes it (microseconds kept) and the row's id.
      cursorAt: sql<string>`${launchParticipants.joinedAt}::text`,
      id: launchParticipants.id,
    })
    .from(launchParticipants)
    .leftJoin(launchGroups, and(eq(launchGroups.launchId, launchParticipants.launchId), eq(launchGroups.groupId, launchParticipants.groupId)))
    .where(and(eq(launchParticipants.launchId, launchId), after))
    .orderBy(asc(launchParticipants.joinedAt), asc(launchParticipants.id));
}

type Row = Awaited<ReturnType<typeof rowsOf>>[number];

const member = (r: Row) => ({
  participant: r.participant,
  id_group: r.id_group,
  group_name: r.group_name ?? "",
  joined_at: toBrasiliaIso(r.joined_at),
  left_at: r.left_at ? toBrasiliaIso(r.left_at) : null,
  staff: r.staff,
  buyer: r.buyer,
});

export async function launchMembers(db: Db, tenantId: string, launchId: string, query: LaunchMembersQuery, sendFile?: (f: FileStream) => void) {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  const scope = (await anyPurchases(db, tenantId)) ? { tenantId, launchId, channelIds: launch.channelIds, createdAt: launch.createdAt } : null;
  if (query.format === "json") {
    const [[{ total }], rows] = await Promise.all([
      db.select({ total: count() }).from(launchParticipants).where(eq(launchParticipants.launchId, launchId)),
      rowsOf(db, launchId, scope)
        .limit(membersPerPage)
        .offset((query.page - 1) * membersPerPage),
    ]);
    return { success: true as const, page: query.page, per_page: membersPerPage, total, members: rows.map(member) };
  }
  const sep = query.delimiter === "semicolon" ? ";" : ",";
  const body = csvStream<{ at: string; id: number }>(csvColumns, sep, async (after) => {
    const keyset = after ? sql`(${launchParticipants.joinedAt}, ${launchParticipants.id}) > (${after.at}::timestamptz, ${after.id})` : undefined;
    const rows = await rowsOf(db, launchId, scope, keyset).limit(csvPageRows);
    const last = rows.at(-1);
    return {
      rows: rows.map((r) => {
        const m = member(r);
        return [m.participant, m.id_group, m.group_name, m.joined_at, m.left_at ?? "", String(m.staff), String(m.buyer)];
      }),
      last: last ? { at: last.cursorAt, id: last.id } : null,
    };
  });
  return fileAnswer({ content_type: "text/csv; charset=utf-8", file_name: `${launch.slug}-membros.csv` }, body, sendFile);
}
