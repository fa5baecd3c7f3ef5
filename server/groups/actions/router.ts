import { audited } from "../../audit/audited";
import { accountProcedure, router } from "../../trpc";
import { cancelGroupAction } from "./cancel-group-action";
import { createGroupAction } from "./create-group-action";
import { infoGroupAction } from "./info-group-action";
import { listGroupActions } from "./list-group-actions";
import {
  cancelGroupActionOutput,
  createGroupActionInput,
  createGroupActionOutput,
  infoGroupActionInput,
  infoGroupActionOutput,
  listGroupActionsInput,
  listGroupActionsOutput,
} from "./schema";
import { wakeGroupAction } from "./wake";

const tags = ["Group actions"];

/** Group actions (CONTRACT §8; docs/groups.md): one setting change across every group of a segment or a launch, on time, exactly once. */
export const groupActionsRouter = router({
  create: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-group-action",
        tags,
        summary: "Schedule a group action over a segment's or a launch's groups",
        description:
          "Closes or opens the groups (only admins send), locks their info, renames them ({n}: the group's number), changes the description or the " +
          "picture, promotes, demotes or removes participants: in every group of the target, through the numbers that are admins there, " +
          "exactly once per group, read back from the platform before a group is done (docs/groups.md). Give exactly one of id_segment and id_launch.",
        protect: true,
        errorResponses: [400, 401, 404, 409, 422, 429, 500],
      },
      idempotent: true,
    })
    .input(createGroupActionInput)
    .output(createGroupActionOutput)
    .mutation(async ({ ctx, input }) => {
      const a = await audited(
        ctx,
        "group_action.create",
        (tx) =>
          createGroupAction(
            tx,
            ctx.tenantId,
            { name: input.name, segmentId: input.id_segment, launchId: input.id_launch, action: input.action, scheduledAt: input.scheduled_at },
            ctx.now,
          ),
        (r) => r.id,
      );
      wakeGroupAction(a.id);
      return { success: true as const, id_action: a.id };
    }),

  info: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/info-group-action/{id_action}",
        tags,
        summary: "A group action: status, counters and each group's result",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(infoGroupActionInput)
    .output(infoGroupActionOutput)
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await infoGroupAction(ctx.db, ctx.tenantId, input.id_action)) })),

  list: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-group-actions",
        tags,
        summary: "The account's group actions, newest first (of one launch and/or segment)",
        protect: true,
        errorResponses: [400, 401, 429, 500],
      },
    })
    .input(listGroupActionsInput)
    .output(listGroupActionsOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      actions: await listGroupActions(ctx.db, ctx.tenantId, { launchId: input.id_launch, segmentId: input.id_segment }),
    })),

  cancel: accountProcedure("editor")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/cancel-group-action/{id_action}",
        tags,
        summary: "Cancel a group action (its pending groups are not changed)",
        protect: true,
        errorResponses: [400, 401, 404, 409, 429, 500],
      },
    })
    .input(infoGroupActionInput)
    .output(cancelGroupActionOutput)
    .mutation(async ({ ctx, input }) => {
      const a = await audited(
        ctx,
        "group_action.cancel",
        (tx) => cancelGroupAction(tx, ctx.tenantId, input.id_action, ctx.now),
        (r) => r.id,
      );
      return { success: true as const, id_action: a.id, status: a.status };
    }),
});
