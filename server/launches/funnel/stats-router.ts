import { accountProcedure, router } from "../../trpc";
import { launchAnalytics } from "./launch-analytics";
import { launchMembers } from "./launch-members";
import { metaEventLog } from "./meta-log";
import { launchAnalyticsInput, launchAnalyticsOutput, launchMembersInput, launchMembersOutput, metaEventLogInput, metaEventLogOutput } from "./stats-schema";

const tags = ["Launches"];

/** A launch's numbers (docs/decisions.md#launch-endpoints): owner only; partner apps never see them. */
export const launchStatsRouter = router({
  analytics: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/launch-analytics/{id_launch}",
        tags,
        summary: "A launch's clicks, joins, leaves and members per day, by source and by group",
        description:
          "Account owner only. `days` (1–365, anything else is 30) days ending today in Brasília time: exactly one row per day, oldest " +
          "first, zeros included. `joins` and `leaves` count leads only (not staff numbers, the template's admins or the channels' own " +
          "numbers); `members` is everyone in the launch's groups at the end of the day. `by_source` groups the period's clicks by " +
          "`utm_source` (null: none): the 20 largest, then one `(outros)` row for the rest. The join link's raw clicks are kept 90 " +
          "days and each day is folded into daily figures before, so the 365 days are all answered. Another account's launch is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(launchAnalyticsInput)
    .output(launchAnalyticsOutput)
    .query(({ ctx, input }) => launchAnalytics(ctx.db, ctx.tenantId, input.id_launch, input.days ?? 30, ctx.now)),

  members: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/launch-members/{id_launch}",
        tags,
        summary: "Who joined and left a launch's groups (JSON pages or CSV)",
        description:
          "Account owner only; partner apps never see it. One row per join (a re-join is a new row): `participant`, `id_group`, " +
          "`group_name`, `joined_at`, `left_at` (null while in the group), `staff`. `format=json` (default): pages of 500, oldest join " +
          "first. `format=csv`: every row in one `text/csv` file, UTF-8 with a BOM, a header row " +
          "`participant,id_group,group_name,joined_at,left_at,staff`, comma-separated or `delimiter=semicolon`. In either, a field " +
          'holding `,` or `;`, a quote, CR or LF is quoted (`"Turma;=1+1"`), and one starting with `=`, `+`, `-`, `@`, TAB or CR ' +
          "gets a leading `'` (so a spreadsheet never runs it as a formula).",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
      fileResponse: "text/csv",
    })
    .input(launchMembersInput)
    .output(launchMembersOutput)
    .query(({ ctx, input }) => launchMembers(ctx.db, ctx.tenantId, input.id_launch, input, ctx.sendFile)),

  /** Dashboard: the launch's Meta Conversions API log (docs/launches.md#metas-conversions-api). */
  metaEvents: accountProcedure("viewer")
    .input(metaEventLogInput)
    .output(metaEventLogOutput)
    .query(({ ctx, input }) => metaEventLog(ctx.db, ctx.tenantId, input.id_launch, input.limit)),
});
