import { audited } from "../../audit/audited";
import { accountProcedure, router } from "../../trpc";
import { removeBuyersNow } from "./buyer-removals";
import { launchBuyersInput, launchBuyersOutput, removeBuyersOutput } from "./buyers-schema";
import { listBuyersInGroups } from "./list-buyers-in-groups";
import { wakeGroupAction } from "./wake";

const tags = ["Launches"];

/** Buyers still in a launch's groups, and removing them now (CONTRACT §9; docs/launches.md#buyers-leave-the-groups). */
export const launchBuyersRouter = router({
  list: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/launch-buyers-in-groups/{id_launch}",
        tags,
        summary: "The launch's buyers who are still members of its groups",
        description:
          "Account owner only. One row per person and group: members now of one of the launch's groups whose phone (or the phone a LID was paired " +
          "with; a Brazilian mobile with or without its ninth digit) made an approved, never refunded purchase at or after the launch was created. " +
          "Staff, the template's admins and the account's own numbers are never listed. Another account's launch is 404.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(launchBuyersInput)
    .output(launchBuyersOutput)
    .query(async ({ ctx, input }) => ({ success: true as const, buyers: await listBuyersInGroups(ctx.db, ctx.tenantId, input.id_launch) })),

  removeNow: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/remove-buyers/{id_launch}",
        tags,
        summary: "Remove the buyers still in the launch's groups now",
        description:
          "Account owner only. Queues group actions of type remove (docs/groups.md) for everyone launch-buyers-in-groups lists, whatever the " +
          "launch's buyers settings say: through an admin number of each group, exactly once per person and group (a removal still pending is " +
          "left to run; one that failed is queued again). Each removal the platform confirms is a group_activity `buyer_removed`.",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
      idempotent: true,
    })
    .input(launchBuyersInput)
    .output(removeBuyersOutput)
    .mutation(async ({ ctx, input }) => {
      const r = await audited(
        ctx,
        "launch.remove_buyers",
        (tx) => removeBuyersNow(tx, ctx.tenantId, input.id_launch, ctx.now),
        () => input.id_launch,
      );
      for (const id of r.actions) wakeGroupAction(id);
      return { success: true as const, id_action: r.actions, removals: r.removals };
    }),
});
