import { accountProcedure, router } from "../trpc";
import { listAuditLog } from "./list-audit-log";
import { listAuditLogInput, listAuditLogOutput } from "./schema";

/** CONTRACT §10: the audit log (REST with the account's API key; the Registro de atividades page for owners and admins). */
export const auditRouter = router({
  list: accountProcedure("admin")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-audit-log",
        tags: ["Audit log"],
        summary: "The account's audit log: every change and refused attempt, newest first, 100 a page (docs/team.md#audit-log)",
        protect: true,
        errorResponses: [400, 401, 429, 500],
      },
    })
    .input(listAuditLogInput)
    .output(listAuditLogOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      ...(await listAuditLog(ctx.db, ctx.tenantId, { ...input, actorType: input.actor_type })),
    })),
});
