import { type Query, type SQLWrapper, sql } from "drizzle-orm";
import { type Db, type Tx, withCommit } from "../../db/client";
import { type AuditActorType, auditLog } from "../../db/schema";
import type { Context } from "../trpc";

/** Who made a change (CONTRACT §10): never a secret — a member's e-mail, an API key's prefix, an app's name. */
export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  label: string | null;
}

export interface AuditEntry {
  tenantId: string;
  actor: AuditActor;
  /** `<thing>.<verb>`, e.g. `campaign.create`, `member.invite` (docs/team.md#audit-actions). */
  action: string;
  /** The id of what changed; never a body, a token or a password. */
  target?: string | null;
  ip?: string | null;
  outcome?: "ok" | "denied";
  at: Date;
}

export const systemActor: AuditActor = { type: "system", id: null, label: "service" };
export const cliActor: AuditActor = { type: "cli", id: null, label: "admin CLI" };

/** The actor of a tRPC/REST call. */
export function actorOf(caller: Context["caller"]): AuditActor {
  switch (caller.kind) {
    case "session":
      return { type: "member", id: caller.userId, label: caller.email ?? null };
    case "apiKey":
      return { type: "api_key", id: caller.apiKeyId, label: caller.apiKeyPrefix ?? null };
    case "partner":
      return { type: "partner_app", id: caller.appId, label: caller.appName ?? caller.appId };
    default:
      return { type: "system", id: null, label: null };
  }
}

/**
 * Writes one audit entry. Called with the change's own transaction (`tx`), so the entry and the change are
 * committed together or not at all. On PostgreSQL the insert goes with the transaction's next statement or its
 * COMMIT, no round trip of its own; a failed insert fails the transaction (`withCommit`, db/client.ts;
 * docs/benchmarks.md#the-audit-log). Its text is built once per process (`insertQuery`) and runs on the
 * transaction's own session, a named prepared statement on PostgreSQL.
 */
export function recordAudit(tx: Db | Tx, entry: AuditEntry): Promise<void> {
  insertQuery ??= tx.insert(auditLog).values(placeholders).toSQL();
  return withCommit(tx, tx._.session.prepareQuery(insertQuery, undefined, "audit_insert", false).execute(rowOf(entry)));
}

// Building the insert through drizzle was ~90 % of the entry's CPU, and its garbage the p99's pauses
// (docs/benchmarks.md#the-audit-log): built once with placeholders, a call only binds its values.
const placeholders = {
  at: sql.placeholder("at"),
  tenantId: sql.placeholder("tenantId"),
  actorType: sql.placeholder("actorType"),
  actorId: sql.placeholder("actorId"),
  actorLabel: sql.placeholder("actorLabel"),
  action: sql.placeholder("action"),
  target: sql.placeholder("target"),
  ip: sql.placeholder("ip"),
  outcome: sql.placeholder("outcome"),
};
let insertQuery: Query | undefined;

const rowOf = (entry: AuditEntry) => ({
  at: entry.at,
  tenantId: entry.tenantId,
  actorType: entry.actor.type,
  actorId: entry.actor.id,
  actorLabel: entry.actor.label,
  action: entry.action,
  target: entry.target ?? null,
  ip: entry.ip ?? null,
  outcome: entry.outcome ?? "ok",
});

/**
 * Runs `change` (one insert, update or delete, not yet run) with the entry's INSERT in front of it as a CTE: the
 * change and its entry are one statement, so the entry costs no statement, round trip or Bind of its own on either
 * database (docs/benchmarks.md#the-audit-log). The CTE runs whether or not the change touched a row, as a separate
 * INSERT would; the entry is committed or rolled back with the change. Answers the change's raw rows.
 */
export function withAuditEntry(tx: Db | Tx, change: SQLWrapper & { toSQL(): Query }, entry: AuditEntry): Promise<unknown> {
  insertQuery ??= tx.insert(auditLog).values(placeholders).toSQL();
  const { sql: text, params } = change.toSQL();
  const query = { sql: `with audit_entry as (${insertAfter(params.length)}) ${text}`, params: [...params, ...insertQuery.params] };
  return tx._.session.prepareQuery(query, undefined, undefined, false).execute(rowOf(entry));
}

/** The entry's INSERT with its parameters numbered after the change's `offset` ones (a change's text has a few sizes). */
const insertAfter = (offset: number) => {
  let text = numberedAfter.get(offset);
  if (text === undefined) {
    text = (insertQuery as Query).sql.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + offset}`);
    numberedAfter.set(offset, text);
  }
  return text;
};
const numberedAfter = new Map<number, string>();

/** The INSERT of one audit entry, not run: a statement may hold it in a CTE beside the change it records (moderation). */
export function auditInsert(tx: Db | Tx, entry: AuditEntry) {
  return tx.insert(auditLog).values(rowOf(entry));
}

/** The entry of a call made through tRPC or REST: its actor, address and time come from the context. */
export const auditOf = (ctx: Pick<Context, "caller" | "clientIp" | "now"> & { tenantId: string }, action: string, target?: string | null): AuditEntry => ({
  tenantId: ctx.tenantId,
  actor: actorOf(ctx.caller),
  action,
  target,
  ip: ctx.clientIp ?? null,
  at: ctx.now,
});
