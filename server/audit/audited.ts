import type { Db } from "../../db/client";
import type { Context } from "../trpc";
import { auditOf, recordAudit } from "./record-audit";

/**
 * The audit log's one general mechanism (docs/team.md#audit-log): runs a change in a transaction and writes its
 * entry in that same transaction, the actor, address and time taken from the call's context. `target` picks the
 * changed thing's id from the result (never a body or a secret).
 */
export function audited<T>(
  ctx: Pick<Context, "db" | "caller" | "clientIp" | "now"> & { tenantId: string },
  action: string,
  change: (tx: Db) => Promise<T>,
  target?: (result: T) => string | null | undefined,
): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    // A transaction is a database handle for the operations (they take `Db`); their own transactions become savepoints.
    const result = await change(tx as unknown as Db);
    await recordAudit(tx, auditOf(ctx, action, target?.(result) ?? null));
    return result;
  });
}

/**
 * For an operation that talks to the messaging provider on its way (segments check their groups, settings their test
 * groups): a transaction must not stay open across the provider's calls (on PGlite, one connection, the provider's
 * own queries would wait on it), so the entry is written right after the change succeeds.
 */
export async function auditedAfter<T>(
  ctx: Pick<Context, "db" | "caller" | "clientIp" | "now"> & { tenantId: string },
  action: string,
  change: (db: Db) => Promise<T>,
  target?: (result: T) => string | null | undefined,
): Promise<T> {
  const result = await change(ctx.db);
  await recordAudit(ctx.db, auditOf(ctx, action, target?.(result) ?? null));
  return result;
}
