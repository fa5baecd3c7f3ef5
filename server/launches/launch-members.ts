/**
 * launch-members (docs/decisions.md#launch-endpoints): one row per join (a re-join is a new row) with
 * the group, when the person joined and left, and whether they are staff. JSON in pages of 500, or the
 * whole list as one CSV file (UTF-8 with a BOM so spreadsheets read accents; `delimiter=semicolon` for
 * locales whose spreadsheets expect `;`). `buyer`: whether the person is one of the launch's buyers
 * (server/launches/buyer-figures.ts: a purchase approved and never refunded).
 */
import { and, asc, count, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launchGroups, launchParticipants } from "../../db/schema";
import { toBrasiliaIso } from "../time/brasilia";
import { anyPurchases, type BuyerScope, participantBought } from "./buyer-figures";
import { findOwnedLaunch } from "./find-launch-owned";
import { membersPerPage } from "./stats-schema";

export interface LaunchMembersQuery {
  format: "json" | "csv";
  page: number;
  delimiter: "comma" | "semicolon";
}

const csvColumns = ["participant", "id_group", "group_name", "joined_at", "left_at", "staff", "buyer"] as const;
/** Rows read per query while the CSV is built. */
const csvChunk = 5000;

/** `scope` null: the account never had a purchase, nobody is a buyer. */
function rowsOf(db: Db, launchId: string, scope: BuyerScope | null) {
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
    })
    .from(launchParticipants)
    .leftJoin(launchGroups, and(eq(launchGroups.launchId, launchParticipants.launchId), eq(launchGroups.groupId, launchParticipants.groupId)))
    .where(eq(launchParticipants.launchId, launchId))
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

/**
 * One CSV field (CONTRACT §6): quoted when it holds either separator (`,` or `;`, whichever the file uses:
 * a spreadsheet in a `;` locale splits a comma file's unquoted `;`), a quote or a line break; a text a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a leading `'` (OWASP's CSV
 * injection rule).
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[,;"\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export async function launchMembers(db: Db, tenantId: string, launchId: string, query: LaunchMembersQuery) {
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
  const lines = [csvColumns.join(sep)];
  for (let offset = 0; ; offset += csvChunk) {
    const rows = await rowsOf(db, launchId, scope).limit(csvChunk).offset(offset);
    for (const r of rows) {
      const m = member(r);
      lines.push([m.participant, m.id_group, m.group_name, m.joined_at, m.left_at ?? "", String(m.staff), String(m.buyer)].map(csvField).join(sep));
    }
    if (rows.length < csvChunk) break;
  }
  return {
    file: {
      content_type: "text/csv; charset=utf-8",
      file_name: `${launch.slug}-membros.csv`,
      content: `\uFEFF${lines.join("\r\n")}\r\n`,
    },
  };
}
