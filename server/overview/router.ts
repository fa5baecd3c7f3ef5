import { router, sessionProcedure } from "../trpc";
import { getOverview } from "./get-overview";
import { overviewOutput } from "./schema";

/** The dashboard's home page (docs/decisions.md#dashboard-overview-and-phones): a session procedure, not part of the REST API. */
export const overviewRouter = router({
  get: sessionProcedure("viewer")
    .output(overviewOutput)
    .query(({ ctx }) => getOverview(ctx.db, ctx.tenantId, ctx.now)),
});
