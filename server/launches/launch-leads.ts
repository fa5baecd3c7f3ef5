/**
 * launch-leads list (docs/launches.md#leads): the launch's leads, all or by whether they joined, as JSON pages
 * of 500 or one CSV file (UTF-8 with a BOM and the CSV rules of launch-members), so the team can send the link
 * again to who never joined.
 */
import { and, asc, count, eq, not } from "drizzle-orm";
import type { Db } from "../../db/client";
import { launchLeads } from "../../db/schema";
import { toBrasiliaIso } from "../time/brasilia";
import { findOwnedLaunch } from "./find-launch-owned";
import { csvField } from "./launch-members";
import { leadJoined } from "./lead-figures";
import { type ListLeadsQuery, leadsPerPage } from "./leads-schema";

const csvColumns = ["phone", "name", "email", "source", "joined", "created_at"] as const;
/** Rows read per query while the CSV is built. */
const csvChunk = 5000;
const fileSuffix = { all: "leads", joined: "leads-entraram", not_joined: "leads-nao-entraram" } as const;

export async function launchLeadsList(db: Db, tenantId: string, launchId: string, query: ListLeadsQuery) {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  const joined = leadJoined(launchId, launch.channelIds);
  const where = and(eq(launchLeads.launchId, launchId), query.status === "joined" ? joined : query.status === "not_joined" ? not(joined) : undefined);
  const rows = (limit: number, offset: number) =>
    db
      .select({
        phone: launchLeads.phone,
        name: launchLeads.name,
        email: launchLeads.email,
        source: launchLeads.source,
        joined: joined.mapWith(Boolean),
        createdAt: launchLeads.createdAt,
      })
      .from(launchLeads)
      .where(where)
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
  const lines = [csvColumns.join(sep)];
  for (let offset = 0; ; offset += csvChunk) {
    const chunk = await rows(csvChunk, offset);
    for (const r of chunk) {
      const l = out(r);
      lines.push([l.phone, l.name ?? "", l.email ?? "", l.source ?? "", String(l.joined), l.created_at].map(csvField).join(sep));
    }
    if (chunk.length < csvChunk) break;
  }
  return {
    file: {
      content_type: "text/csv; charset=utf-8",
      file_name: `${launch.slug}-${fileSuffix[query.status]}.csv`,
      content: `\uFEFF${lines.join("\r\n")}\r\n`,
    },
  };
}
