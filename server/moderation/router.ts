import { z } from "zod";
import { audited } from "../audit/audited";
import { accountProcedure, router } from "../trpc";
import { editBlocklist, listBlocklist } from "./blocklist";
import { listModerationEvents } from "./list-moderation-events";
import {
  editBlocklistInput,
  editBlocklistOutput,
  listBlocklistOutput,
  listModerationEventsInput,
  listModerationEventsOutput,
  undoModerationInput,
  undoModerationOutput,
} from "./schema";
import { undoModeration } from "./undo-moderation";

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
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      ...(await audited(ctx, "moderation.edit_blocklist", (tx) => editBlocklist(tx, ctx.tenantId, input, ctx.now))),
    })),

  events: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-moderation-events/{id_launch}",
        tags,
        summary: "A launch's moderation decisions, newest first",
        description:
          "Account owner only. Each decision: `at`, `id_group`, `participant`, `rule` (link, banned_word, flood, country_code, blocklist), `action` " +
          "(deleted, removed, or would_delete / would_remove in shadow mode) and an `excerpt` of at most 100 characters. A member's message " +
          "that breaks a rule is deleted for everyone and gives a strike (enforce); at strikes_to_remove strikes the member is removed (an " +
          "event `removed`). A message is judged once (a redelivery decides nothing). The same decisions go out as the group_activity " +
          "webhook event `moderation`, at most one a minute per group. 100 a page; pass `next_cursor` as `cursor` for older ones. Another " +
          "account's launch is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(listModerationEventsInput)
    .output(listModerationEventsOutput)
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listModerationEvents(ctx.db, ctx.tenantId, input.id_launch, input.cursor)) })),

  undo: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/undo-moderation/{id_launch}",
        tags,
        summary: "Undo a removal made by mistake: clear the person's strikes and blocklist entry, answer the group's invite link",
        description:
          "Account owner only. Clears the person's strikes within the launch and takes their number off the account's blocklist (a LID is " +
          "matched through the number the launch's channels paired it with). No one is re-added (the platform adds no one without their " +
          "consent): send them `invite_link`. Idempotent. Another account's launch, or a group that is not the launch's, is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(undoModerationInput)
    .output(undoModerationOutput)
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      ...(await audited(
        ctx,
        "moderation.undo",
        (tx) => undoModeration(tx, ctx.tenantId, input),
        () => input.id_launch,
      )),
    })),
});
