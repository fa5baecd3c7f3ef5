import { whenDenied } from "../trpc";
import { auditOf, recordAudit } from "./record-audit";

/**
 * A call the ladder refused for the member's role is recorded as `outcome: "denied"`, its action the procedure's
 * path (e.g. `apiKeys.create`). Registered once by server/root.ts.
 */
whenDenied(async (ctx, path) => {
  const c = ctx.caller;
  if (c.kind !== "session") return;
  await recordAudit(ctx.db, { ...auditOf({ ...ctx, tenantId: c.tenantId }, path), outcome: "denied" });
});
