import { auditWrite } from "../audit/audited";
import { accountProcedure, router } from "../trpc";
import { editSeries, stopSeries } from "./edit-series";
import { listSeries } from "./list-series";
import { deleteSeriesOutput, editSeriesInput, listSeriesOutput, seriesAction, seriesChangeOutput } from "./series-schema";

const tags = ["Series"];

/** Repeating campaigns (docs/series.md): created by create-campaign with `repeat`; listed, edited and stopped here. */
export const seriesRouter = router({
  list: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-series",
        tags,
        summary: "The account's repeating campaigns (series), newest first",
        protect: true,
        errorResponses: [401, 429, 500],
      },
    })
    .output(listSeriesOutput)
    .query(async ({ ctx }) => ({ success: true as const, series: await listSeries(ctx.db, ctx.tenantId) })),

  edit: accountProcedure("editor")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/edit-series/{id_series}",
        tags,
        summary: "Pause, resume, rename, or change the text or schedule of a series' future runs",
        description:
          "The future run (a scheduled campaign that has not started) follows: pausing cancels it (a `canceled` campaign, with its webhook); " +
          "resuming, or a new schedule, makes the first occurrence after now (occurrences that passed while paused are skipped, not caught up); " +
          "a new name or text changes it in place. Runs that started keep what they had. 409 `series_stopped` on a stopped series.",
        protect: true,
        errorResponses: [400, 401, 404, 409, 429, 500],
      },
    })
    .input(editSeriesInput)
    .output(seriesChangeOutput)
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      ...(await editSeries(ctx.db, ctx.tenantId, input, ctx.now, auditWrite(ctx, "series.edit"))),
    })),

  delete: accountProcedure("editor")
    .meta({
      openapi: {
        method: "DELETE",
        path: "/external/delete-series/{id_series}",
        tags,
        summary: "Stop a series for good: its future run is canceled; the runs that started stay campaigns",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(seriesAction)
    .output(deleteSeriesOutput)
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      message: "Series stopped",
      series: await stopSeries(ctx.db, ctx.tenantId, input.id_series, ctx.now, auditWrite(ctx, "series.stop")),
    })),
});
