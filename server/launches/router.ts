import { accountProcedure, router } from "../trpc";
import { auditWrite } from "../audit/audited";
import { addLaunchGroups } from "./launch/add-launch-groups";
import { createLaunch } from "./create-launch";
import { editLaunch } from "./edit-launch";
import { groupsOut, joinUrl } from "./launch/find-launch";
import { infoLaunch, listLaunches } from "./info-launch";
import {
  createLaunchInput,
  createLaunchOutput,
  editLaunchInput,
  infoLaunchInput,
  infoLaunchOutput,
  launchGroupsInput,
  launchGroupsOutput,
  listLaunchesOutput,
} from "./launch/schema";

const tags = ["Launches"];

/** What a failed group creation answers (docs/decisions.md#launch-details-decided-while-building). */
const creationErrors =
  "A group the platform made is never made twice: one whose answer was lost, or that failed after the platform made it, is found and kept. Groups are created by the launch's channels in turn, each within its `group_create_cap` per Brasília day (the `number_health` setting, or the channel's own `limits`), with the other channels and the template's admins added and promoted. 503 `channel_offline`: no channel of the launch is connected (or the platform took them off); 429 `group_create_cap` with Retry-After: every channel that could create has reached its cap for the day (creations start again at 00:00 in Brasília); 503 `group_create_rate_limited`: WhatsApp throttled group creation on the number now or within the last hour (nothing made; no group is made on it for an hour); 503 `group_create_unknown`: the platform may have made the group and cannot be asked yet (it is looked up before another is made; ask again later); 503 `group_create_backoff`: a creation of the launch (or through every number that could create) failed a moment ago and waits (5 min after a failure, doubling to 1 h; nothing made; the message names when); 400 `provider_refused`: the platform refused the template.";

export const launchesRouter = router({
  create: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-launch",
        tags,
        summary: "Create a launch: a join link that fills groups in order",
        description: `Nothing is kept when groups are asked for and not one can be made. ${creationErrors}`,
        protect: true,
        errorResponses: [400, 401, 403, 404, 409, 429, 500, 503],
      },
      successStatus: 201,
      idempotent: true,
    })
    .input(createLaunchInput)
    .output(createLaunchOutput)
    .mutation(async ({ ctx, input }) => {
      const { launch, groups } = await createLaunch(ctx.db, ctx.provider, ctx.tenantId, input, ctx.now, auditWrite(ctx, "launch.create"));
      return {
        success: true as const,
        id_launch: launch.id,
        name: launch.name,
        slug: launch.slug,
        join_url: joinUrl(launch.slug),
        id_segment: launch.segmentId,
        status: launch.status,
        capacity: launch.capacity,
        margin: launch.margin,
        groups: await groupsOut(ctx.db, launch.id, groups),
        timestamp: ctx.now.toISOString(),
      };
    }),

  edit: accountProcedure("editor")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/edit-launch/{id_launch}",
        tags,
        summary: "Edit a launch (partial; not id_launch, join_url or id_segment); answers like info-launch",
        protect: true,
        errorResponses: [400, 401, 403, 404, 409, 429, 500],
      },
    })
    .input(editLaunchInput)
    .output(infoLaunchOutput)
    .mutation(async ({ ctx, input }) => {
      // edit-launch reads only the fields it knows (unknown ones were kept by the schema to name join_url / id_segment).
      const { id_launch, ...changes } = input;
      await editLaunch(ctx.db, ctx.tenantId, id_launch, changes, ctx.now, auditWrite(ctx, "launch.edit"));
      return infoLaunch(ctx.db, ctx.tenantId, id_launch);
    }),

  addGroups: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/launch-groups/{id_launch}",
        tags,
        summary: "Create groups from the template and/or adopt existing ones",
        description: creationErrors,
        protect: true,
        errorResponses: [400, 401, 403, 404, 429, 500, 503],
      },
      idempotent: true,
    })
    .input(launchGroupsInput)
    .output(launchGroupsOutput)
    .mutation(async ({ ctx, input }) => {
      const groups = await addLaunchGroups(ctx.db, ctx.provider, ctx.tenantId, input.id_launch, input, ctx.now);
      return { success: true as const, id_launch: input.id_launch, groups: await groupsOut(ctx.db, input.id_launch, groups) };
    }),

  info: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/info-launch/{id_launch}",
        tags,
        summary: "A launch: its link, groups in order, where the link sends now, and totals",
        protect: true,
        errorResponses: [400, 401, 403, 404, 429, 500],
      },
    })
    .input(infoLaunchInput)
    .output(infoLaunchOutput)
    .query(({ ctx, input }) => infoLaunch(ctx.db, ctx.tenantId, input.id_launch)),

  /** Dashboard: the tenant's launches with their counts. */
  list: accountProcedure("viewer")
    .output(listLaunchesOutput)
    .query(({ ctx }) => listLaunches(ctx.db, ctx.tenantId)),
});
