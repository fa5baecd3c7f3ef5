import { z } from "zod";
import { accountProcedure, router } from "../trpc";
import { editBlocklist, listBlocklist } from "./blocklist";
import { listModerationEvents } from "./list-moderation-events";
import { editBlocklistInput, editBlocklistOutput, listBlocklistOutput, listModerationEventsInput, listModerationEventsOutput } from "./schema";

const tags = ["Moderation"];

/** Moderation of the launches' groups (CONTRACT §9; docs/moderation.md): the account's blocklist and the decisions made. */
export const moderationRouter = router({
  blocklist: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-blocklist",
        tags,
        summary: "The account's blocklist (numbers removed when they join a moderated launch's group)",
        protect: true,
        errorResponses: [401, 429, 500],
      },
    })
    .input(z.object({}))
    .output(listBlocklistOutput)
    .query(async ({ ctx }) => ({ success: true as const, ...(await listBlocklist(ctx.db, ctx.tenantId)) })),

  editBlocklist: accountProcedure("editor")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/edit-blocklist",
        tags,
        summary: "Add numbers to and take numbers off the account's blocklist",
        description:
          "Account owner only. `add` and `remove`: at most 1,000 numbers each, digits with the country code; a Brazilian mobile with or without " +
          "its ninth digit is one entry. Adding a listed number or removing an unlisted one changes nothing. A number in both lists ends off it.",
        protect: true,
        errorResponses: [400, 401, 429, 500],
      },
    })
    .input(editBlocklistInput)
    .output(editBlocklistOutput)
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await editBlocklist(ctx.db, ctx.tenantId, input, ctx.now)) })),

  events: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-moderation-events/{id_launch}",
        tags,
        summary: "A launch's moderation decisions, newest first",
        description:
          "Account owner only. Each decision: `at`, `id_group`, `participant`, `rule` (link, banned_word, flood, country_code, blocklist), `action` " +
          "(deleted, removed, or would_delete / would_remove in shadow mode) and an `excerpt` of at most 100 characters. 100 a page; pass " +
          "`next_cursor` as `cursor` for older ones. Another account's launch is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(listModerationEventsInput)
    .output(listModerationEventsOutput)
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listModerationEvents(ctx.db, ctx.tenantId, input.id_launch, input.cursor)) })),
});
