/**
 * launch-leads list (docs/launches.md#leads): the launch's leads, all or by whether they joined, as JSON pages
 * of 500 or one CSV file (UTF-8 with a BOM and the CSV rules of launch-members, streamed: server/launches/funnel/csv-export.ts), so the team can send the link
 * again to who never joined.
 */
import { and, asc, count, eq, not, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { launchLeads } from "../../../db/schema";
import { toBrasiliaIso } from "../../time/brasilia";
import { findOwnedLaunch } from "../launch/find-launch-owned";
import type { FileStream } from "../../trpc";
import { csvPageRows, csvStream, fileAnswer } from "./csv-export";
import { leadJoined } from "./lead-figures";
import { type ListLeadsQuery, leadsPerPage } from "./leads-schema";

const csvColumns = ["phone", "name", "email", "source", "joined", "created_at"] as const;
const fileSuffix = { all: "leads", joined: "leads-entraram", not_joined: "leads-nao-entraram" } as const;

export async function launchLeadsList(db: Db, tenantId: string, launchId: string, query: ListLeadsQuery, sendFile?: (f: FileStream) => void) {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  const joined = leadJoined(launchId, launch.channelIds);
  const where = and(eq(launchLeads.launchId, launchId), query.status === "joined" ? joined : query.status === "not_joined" ? not(joined) : undefined);
  const rows = (limit: number, offset: number, after?: SQL) =>
    db
      .select({
        phone: launchLeads.phone,
        name: launchLeads.name,
        email: launchLeads.email,
        source: launchLeads.source,
        joined: joined.mapWith(Boolean),
        createdAt: launchLeads.createdAt,
        // The keyset cursor of the CSV's pages: the time as PostgreSQL writes it (microseconds kept).
        cursorAt: sql<string>`${launchLeads.createdAt}::text`,
      })
      .from(launchLeads)
      .where(and(where, after))
      .orderBy(asc(launchLeads.createdAt), asc(launchLeads.phone))
      .limit(limit)
      .offset(offset);
  const out = (r: Awaited<ReturnType<typeof rows>>[number]) => ({
    phone: r.phone,
    name: r.name,
    email: r.email,
    source: r.source,
    joined: r.joined,
    created_at: toBrasiliaIso(r.createdAt),
  });

  if (query.format === "json") {
    const [[{ total }], page] = await Promise.all([
      db.select({ total: count() }).from(launchLeads).where(where),
      rows(leadsPerPage, (query.page - 1) * leadsPerPage),
    ]);
    return { success: true as const, status: query.status, page: query.page, per_page: leadsPerPage, total, leads: page.map(out) };
  }
  const sep = query.delimiter === "semicolon" ? ";" : ",";
  const body = csvStream<{ at: string; phone: string }>(csvColumns, sep, async (after) => {
    // The whole index key (launch_leads_created_idx) in one row comparison, so each page is an index range scan.
    const keyset = after
      ? sql`(${launchLeads.launchId}, ${launchLeads.createdAt}, ${launchLeads.phone}) > (${launchId}, ${after.at}::timestamptz, ${after.phone})`
      : undefined;
    const chunk = await rows(csvPageRows, 0, keyset);
    const last = chunk.at(-1);
    return {
      rows: chunk.map((r) => {
        const l = out(r);
        return [l.phone, l.name ?? "", l.email ?? "", l.source ?? "", String(l.joined), l.created_at];
      }),
      last: last ? { at: last.cursorAt, phone: last.phone } : null,
    };
  });
  return fileAnswer({ content_type: "text/csv; charset=utf-8", file_name: `${launch.slug}-${fileSuffix[query.status]}.csv` }, body, sendFile);
}
