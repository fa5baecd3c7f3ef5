import { and, desc, eq, gte, like, lt, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type AuditActorType, auditLog } from "../../db/schema";

export const auditPageSize = 100;

/** The account's audit log, newest first, 100 a page; the cursor is the last entry's id (ids grow with time). */
export async function listAuditLog(
  db: Db,
  tenantId: string,
  filter: { since?: string; until?: string; actorType?: AuditActorType; action?: string; cursor?: string },
) {
  const where: SQL[] = [eq(auditLog.tenantId, tenantId)];
  if (filter.since) where.push(gte(auditLog.at, new Date(filter.since)));
  if (filter.until) where.push(lt(auditLog.at, new Date(filter.until)));
  if (filter.actorType) where.push(eq(auditLog.actorType, filter.actorType));
  if (filter.action)
    where.push(filter.action.endsWith(".") ? like(auditLog.action, `${filter.action.replace(/[\\%_]/g, "\\$&")}%`) : eq(auditLog.action, filter.action));
  if (filter.cursor) where.push(lt(auditLog.id, Number(filter.cursor)));
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.id))
    .limit(auditPageSize + 1);
  const page = rows.slice(0, auditPageSize);
  return {
    entries: page.map((r) => ({
      at: r.at.toISOString(),
      actor: { type: r.actorType, id: r.actorId, label: r.actorLabel },
      action: r.action,
      target: r.target,
      ip: r.ip,
      outcome: r.outcome,
    })),
    next_cursor: rows.length > auditPageSize ? String(page[page.length - 1].id) : null,
  };
}
