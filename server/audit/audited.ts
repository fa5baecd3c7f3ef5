import type { Db, Tx } from "../../db/client";
import type { Context } from "../trpc";
import { type AuditEntry, auditOf, recordAudit, withAuditEntry } from "./record-audit";

type CallContext = Pick<Context, "db" | "caller" | "clientIp" | "now"> & { tenantId: string };

/**
 * The audit log's one general mechanism (docs/team.md#audit-log): runs a change in a transaction and writes its
 * entry in that same transaction, the actor, address and time taken from the call's context. `target` picks the
 * changed thing's id from the result (never a body or a secret). Operations take `Db`; a transaction is one
 * (PgTransaction extends PgDatabase), and their own transactions become savepoints.
 */
export function audited<T>(ctx: CallContext, action: string, change: (tx: Tx) => Promise<T>, target?: (result: T) => string | null | undefined): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    const result = await change(tx);
    await recordAudit(tx, auditOf(ctx, action, target?.(result) ?? null));
    return result;
  });
}

/**
 * The entry of a call handed to an operation that writes it inside its own write transaction, with the changed
 * thing's id: for operations that call the messaging provider before they write (a transaction must not stay open
 * across the provider's calls: on PGlite, one connection, the provider's own queries would wait on it) or that wake
 * an engine after they commit (the wake-up must find the change committed). A change made only at the provider (a
 * number logged out) has no transaction: its entry follows the provider's answer.
 */
export type AuditWrite = ((tx: Db, target?: string | null) => Promise<void>) & {
  /** The entry itself, for an operation whose change is one statement (auditedStatement). */
  entry?: (target?: string | null) => AuditEntry;
};

export const auditWrite = (ctx: Omit<CallContext, "db">, action: string): AuditWrite => {
  const entry = (target?: string | null) => auditOf(ctx, action, target ?? null);
  return Object.assign((tx: Db, target?: string | null) => recordAudit(tx, entry(target)), { entry });
};

/**
 * An operation's change that is one statement (an insert, update or delete, not yet run), with its entry when it is
 * audited: riding in the statement as a CTE (withAuditEntry) when the entry is at hand, else written after it.
 */
export async function auditedStatement(
  tx: Db,
  change: PromiseLike<unknown> & Parameters<typeof withAuditEntry>[1],
  audit: AuditWrite | undefined,
  target?: string | null,
): Promise<void> {
  if (audit?.entry) {
    await withAuditEntry(tx, change, audit.entry(target));
    return;
  }
  await change;
  await audit?.(tx, target);
}
