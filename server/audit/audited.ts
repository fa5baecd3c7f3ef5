import type { Db, Tx } from "../../db/client";
import type { Context } from "../trpc";
import { auditOf, recordAudit } from "./record-audit";

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
export type AuditWrite = (tx: Db, target?: string | null) => Promise<void>;

export const auditWrite =
  (ctx: Omit<CallContext, "db">, action: string): AuditWrite =>
  (tx, target) =>
    recordAudit(tx, auditOf(ctx, action, target ?? null));
