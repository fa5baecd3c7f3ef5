import { accountProcedure, router } from "../trpc";
import { auditWrite } from "../audit/audited";
import { editSettings } from "./edit-settings";
import { getSettings } from "./get-settings";
import { editSettingsInput, editSettingsOutput, listSettingsOutput } from "./schema";

const tags = ["Settings"];

export const settingsRouter = router({
  get: accountProcedure("viewer")
    .meta({
      openapi: { method: "GET", path: "/external/list-settings", tags, summary: "The tenant's settings", protect: true, errorResponses: [401, 404, 429, 500] },
    })
    .output(listSettingsOutput)
    .query(async ({ ctx }) => ({ success: true as const, settings: await getSettings(ctx.db, ctx.tenantId) })),

  edit: accountProcedure("admin")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/external/edit-settings",
        tags,
        summary: "Change some settings (partial update)",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(editSettingsInput)
    .output(editSettingsOutput)
    .mutation(async ({ ctx, input }) => {
      const { updated, settings } = await editSettings(ctx.db, ctx.tenantId, input, ctx.now, ctx.provider, auditWrite(ctx, "settings.edit"));
      return { success: true as const, updated, settings };
    }),
});
