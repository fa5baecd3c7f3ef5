import { audited } from "../../audit/audited";
import { accountProcedure, router } from "../../trpc";
import { launchLeadsList } from "./launch-leads";
import { leadsPerPage, leadsPerRequest, listLeadsInput, listLeadsOutput, uploadLeadsInput, uploadLeadsOutput } from "./leads-schema";
import { uploadLeads } from "./upload-leads";

const tags = ["Launches"];

/** A launch's leads (docs/launches.md#leads): owner only; partner apps never see them. */
export const launchLeadsRouter = router({
  upload: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/launch-leads/{id_launch}",
        tags,
        summary: "Add or update a launch's leads (capture forms, integrations); idempotent by phone",
        description:
          `Account owner only. Up to ${leadsPerRequest.toLocaleString("en")} \`{phone, name?, email?, source?}\` per request (body at most 8 MiB), ` +
          "written in one transaction: all or nothing. Phones are kept as digits with the country code (10 or 11 digits without `+` are " +
          "Brazilian and get `55`). A phone already among the launch's leads updates that lead (fields left out keep their values), so " +
          "sending the same list twice counts each person once. A bad item is 400 naming it (`leads.17.phone`) and nothing is written. " +
          "A launch keeps at most 200,000 leads: an upload that would pass it is 400 `leads_limit` (naming `leads`, with `current` and `max`) " +
          "and nothing of it is written. " +
          "Another account's launch is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 413, 429, 500],
      },
    })
    .input(uploadLeadsInput)
    .output(uploadLeadsOutput)
    .mutation(({ ctx, input }) =>
      audited(
        ctx,
        "launch.upload_leads",
        (tx) => uploadLeads(tx, ctx.tenantId, input.id_launch, input.leads, ctx.now),
        () => input.id_launch,
      ),
    ),

  list: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/launch-leads/{id_launch}",
        tags,
        summary: "A launch's leads, all or those who joined / never joined (JSON pages or CSV)",
        description:
          "Account owner only. A lead joined when they are (or were) in a group of the launch: by phone, or by a WhatsApp LID that one " +
          "of the launch's numbers paired with their phone; a Brazilian mobile matches with or without its ninth digit. " +
          `\`status=not_joined\` lists who never joined, to send them the link again. \`format=json\` (default): pages of ${leadsPerPage}, ` +
          "oldest lead first. `format=csv`: every row in one `text/csv` file, UTF-8 with a BOM, header `phone,name,email,source,joined,created_at`, " +
          "comma-separated or `delimiter=semicolon`, quoted as launch-members is. Another account's launch is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
      fileResponse: "text/csv",
    })
    .input(listLeadsInput)
    .output(listLeadsOutput)
    .query(({ ctx, input }) => launchLeadsList(ctx.db, ctx.tenantId, input.id_launch, input, ctx.sendFile)),
});
