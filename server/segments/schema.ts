import { z } from "zod";
import { env } from "../env";
import { name } from "../text";
import { idChannel, idGroup } from "../channels/schema";
import { tokenSchema } from "../ids";

export const idSegment = tokenSchema("segment").meta({ example: "segment_5d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6" });

const segmentName = name();
const channelList = z.array(idChannel).min(1, "must list at least one channel").max(1000, "must list at most 1000 channels");
/**
 * SEGMENT_GROUP_LIMIT (read when this module loads, i.e. at server start) bounds the list while it is
 * parsed (docs/decisions.md#limits-abuse-retention, "Sizes"): a longer list is a 400 naming `groups` before any element is looked at.
 */
const groupLimit = env.segmentGroupLimit;
const groupList = z.array(idGroup).min(1, "must list at least one group").max(groupLimit, `must list at most ${groupLimit} groups (SEGMENT_GROUP_LIMIT)`);

export const createSegmentInput = z.object({ name: segmentName, id_channel: channelList, groups: groupList });
export const createSegmentOutput = z.object({
  success: z.literal(true),
  id_segment: z.string(),
  name: z.string(),
  total_groups: z.number().int(),
  timestamp: z.iso.datetime({ offset: true }),
});

export const editSegmentInput = z
  .object({ id_segment: idSegment, name: segmentName.optional(), id_channel: channelList.optional(), groups: groupList.optional() })
  .refine((v) => v.name !== undefined || v.id_channel !== undefined || v.groups !== undefined, {
    message: "send at least one of name, id_channel, groups",
    path: ["body"],
  });
export const editSegmentOutput = z.object({
  success: z.literal(true),
  message: z.string(),
  id_segment: z.string(),
  name: z.string(),
  total_groups: z.number().int(),
});

export const monitoringGroup = z.object({
  id_group: z.string(),
  name: z.string(),
  id_channel: z.string(),
  channel_name: z.string(),
});

export const createMonitoringGroupInput = z.object({ id_segment: idSegment, id_channel: idChannel, id_group: idGroup });
export const createMonitoringGroupOutput = z.object({
  success: z.literal(true),
  message: z.string(),
  id_segment: z.string(),
  monitoring_group: monitoringGroup,
  timestamp: z.iso.datetime({ offset: true }),
});

export const editMonitoringGroupInput = z
  .object({ id_segment: idSegment, id_channel: idChannel.optional(), id_group: idGroup.optional() })
  .superRefine((v, ctx) => {
    if (v.id_channel === undefined && v.id_group === undefined) {
      ctx.addIssue({ code: "custom", message: "send id_channel and id_group", path: ["body"] });
    } else if (v.id_channel === undefined) {
      ctx.addIssue({ code: "custom", message: "is required together with id_group", path: ["id_channel"] });
    } else if (v.id_group === undefined) {
      ctx.addIssue({ code: "custom", message: "is required together with id_channel", path: ["id_group"] });
    }
  });
export const editMonitoringGroupOutput = z.object({
  success: z.literal(true),
  message: z.string(),
  id_segment: z.string(),
  monitoring_group: monitoringGroup,
});

export const segmentDetail = z.object({
  id_segment: z.string(),
  name: z.string(),
  total_groups: z.number().int(),
  id_channel: z.array(z.string()),
  groups: z.array(z.object({ id_group: z.string(), name: z.string(), id_channel: z.string() })),
  monitoring_group: monitoringGroup.nullable(),
  created_at: z.iso.datetime({ offset: true }),
});
