import { z } from "zod";
import { auditWrite } from "../audit/audited";
import { accountProcedure, router } from "../trpc";
import { createSegment } from "./create-segment";
import { editSegment } from "./edit-segment";
import { getSegment, listSegments } from "./list-segments";
import {
  createMonitoringGroupInput,
  createMonitoringGroupOutput,
  createSegmentInput,
  createSegmentOutput,
  editMonitoringGroupInput,
  editMonitoringGroupOutput,
  editSegmentInput,
  editSegmentOutput,
  idSegment,
  monitoringGroup,
  segmentDetail,
} from "./schema";
import { createMonitoringGroup, editMonitoringGroup } from "./set-monitoring-group";

const tags = ["Segments"];

export const segmentsRouter = router({
  create: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-segment",
        tags,
        summary: "Create a segment",
        protect: true,
        errorResponses: [400, 401, 403, 404, 409, 422, 429, 500, 503],
      },
      successStatus: 201,
      idempotent: true,
    })
    .input(createSegmentInput)
    .output(createSegmentOutput)
    .mutation(async ({ ctx, input }) => {
      const s = await createSegment(ctx.db, ctx.provider, ctx.tenantId, input, ctx.now, auditWrite(ctx, "segment.create"));
      return { success: true as const, id_segment: s.id, name: s.name, total_groups: s.totalGroups, timestamp: ctx.now.toISOString() };
    }),

  edit: accountProcedure("editor")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/edit-segment/{id_segment}",
        tags,
        summary: "Edit a segment (partial: name, id_channel, groups)",
        protect: true,
        errorResponses: [400, 401, 403, 404, 429, 500, 503],
      },
    })
    .input(editSegmentInput)
    .output(editSegmentOutput)
    .mutation(async ({ ctx, input }) => {
      const { id_segment, ...changes } = input;
      const s = await editSegment(ctx.db, ctx.provider, ctx.tenantId, id_segment, changes, ctx.now, auditWrite(ctx, "segment.edit"));
      return { success: true as const, message: "Segment updated", id_segment: s.id, name: s.name, total_groups: s.totalGroups };
    }),

  createMonitoringGroup: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/monitoring/group",
        tags,
        summary: "Configure a segment's monitoring group",
        protect: true,
        errorResponses: [400, 401, 404, 409, 429, 500, 503],
      },
      successStatus: 201,
    })
    .input(createMonitoringGroupInput)
    .output(createMonitoringGroupOutput)
    .mutation(async ({ ctx, input }) => {
      const target = { tenantId: ctx.tenantId, segmentId: input.id_segment, channelId: input.id_channel, groupId: input.id_group };
      const group = await createMonitoringGroup(ctx.db, ctx.provider, target, ctx.now, auditWrite(ctx, "segment.monitoring_group_create"));
      return {
        success: true as const,
        message: "Monitoring group configured",
        id_segment: input.id_segment,
        monitoring_group: group,
        timestamp: ctx.now.toISOString(),
      };
    }),

  editMonitoringGroup: accountProcedure("editor")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/edit-monitoring/group/{id_segment}",
        tags,
        summary: "Change a segment's monitoring group (id_channel and id_group together)",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500, 503],
      },
    })
    .input(editMonitoringGroupInput)
    .output(editMonitoringGroupOutput)
    .mutation(async ({ ctx, input }) => {
      const target = { tenantId: ctx.tenantId, segmentId: input.id_segment, channelId: input.id_channel!, groupId: input.id_group! };
      const group = await editMonitoringGroup(ctx.db, ctx.provider, target, ctx.now, auditWrite(ctx, "segment.monitoring_group_edit"));
      return { success: true as const, message: "Monitoring group updated", id_segment: input.id_segment, monitoring_group: group };
    }),

  /** Dashboard: the tenant's segments and one segment in full. */
  list: accountProcedure("viewer")
    .output(
      z.array(
        z.object({
          id_segment: z.string(),
          name: z.string(),
          total_groups: z.number(),
          monitoring_group: monitoringGroup.nullable(),
          created_at: z.string(),
          id_launch: z.string().nullable(),
        }),
      ),
    )
    .query(({ ctx }) => listSegments(ctx.db, ctx.tenantId)),
  get: accountProcedure("viewer")
    .input(z.object({ id_segment: idSegment }))
    .output(segmentDetail)
    .query(({ ctx, input }) => getSegment(ctx.db, ctx.tenantId, input.id_segment)),
});
