import { partnerProcedure, router } from "../trpc";
import { listPartnerCampaigns, partnerPageSize } from "./list-campaigns";
import { partnerCampaignsInput, partnerCampaignsOutput, partnerStatisticsInput, partnerStatisticsOutput } from "./schema";
import { partnerStatistics } from "./statistics";

const tags = ["Partner apps"];
const errorResponses = [401, 403, 429, 500];

/** Read-only, aggregate, PII-free: what an authorized partner app may see of the tenant. */
export const partnerRouter = router({
  campaigns: partnerProcedure("campaigns:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/partner/campaigns",
        tags,
        summary: "The tenant's campaigns, 20 a page (scope campaigns:read)",
        description:
          "Authorization: Bearer <access_token> with scope campaigns:read. Newest first; `pages` is 0 when there are no campaigns; " +
          "a `page` below 1 or not a number is 400.",
        protect: true,
        errorResponses: [400, ...errorResponses],
      },
    })
    .input(partnerCampaignsInput)
    .output(partnerCampaignsOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      page: input.page,
      per_page: partnerPageSize as 20,
      ...(await listPartnerCampaigns(ctx.db, ctx.tenantId, input.page)),
    })),

  statistics: partnerProcedure("statistics:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/partner/statistics",
        tags,
        summary: "Aggregate statistics of the tenant (scope statistics:read)",
        description: "Authorization: Bearer <access_token> with scope statistics:read. No names, ids, phone numbers or group ids.",
        protect: true,
        errorResponses,
      },
    })
    .input(partnerStatisticsInput)
    .output(partnerStatisticsOutput)
    .query(async ({ ctx, input }) => {
      const days = input.days ?? 30;
      return { success: true as const, period_days: days, statistics: await partnerStatistics(ctx.db, ctx.tenantId, days, ctx.now) };
    }),
});
