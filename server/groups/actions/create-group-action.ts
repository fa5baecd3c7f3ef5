import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { channels, type GroupActionSpec, groupActions } from "../../../db/schema";
import { parseScheduledAt } from "../../campaigns/scheduled-at";
import { BadRequest } from "../../errors";
import { newId } from "../../ids";
import { findOwnedLaunch } from "../../launches/launch/find-launch-owned";
import { findSegment } from "../../segments/find-segment";
import { recordActionStatus } from "./action-events";
import { fetchPicture } from "./fetch-picture";
import type { GroupActionInput } from "./schema";
import { addTargetGroups, targetSegmentId } from "./target-groups";

export interface NewGroupAction {
  name?: string;
  segmentId?: string;
  launchId?: string;
  action: GroupActionInput;
  scheduledAt?: string;
}

/**
 * Creates a group action (CONTRACT §8): the target checked (another tenant's is 404), `scheduled_at` read as campaigns
 * read it (absent: now), a `remove` of one of the tenant's own numbers refused, a picture fetched once; the action and
 * its groups written in one transaction with its `group_action` event. A launch's groups are read again when it starts.
 */
export async function createGroupAction(db: Db, tenantId: string, input: NewGroupAction, now: Date) {
  if (input.segmentId) await findSegment(db, tenantId, input.segmentId);
  if (input.launchId) await findOwnedLaunch(db, tenantId, input.launchId);
  const scheduledAt = input.scheduledAt === undefined ? now : parseScheduledAt(input.scheduledAt, now);
  const spec: GroupActionSpec = { ...input.action };
  if ("participants" in input.action) spec.participants = [...new Set(input.action.participants)];
  if (input.action.type === "remove") {
    const own = await db
      .select({ phone: channels.phone })
      .from(channels)
      .where(and(eq(channels.tenantId, tenantId), isNotNull(channels.phone), inArray(channels.phone, spec.participants ?? [])));
    if (own.length > 0) throw new BadRequest(`action.participants: ${own[0].phone} is one of your own numbers (a channel); it cannot be removed`);
  }
  let picture: string | null = null;
  if (input.action.type === "set_picture") {
    const fetched = await fetchPicture(input.action.picture_url);
    picture = fetched.base64;
    spec.picture_sha256 = fetched.sha256;
  }
  const id = newId("action");
  return db.transaction(async (tx) => {
    await tx.insert(groupActions).values({
      id,
      tenantId,
      name: input.name ?? null,
      segmentId: input.segmentId ?? null,
      launchId: input.launchId ?? null,
      action: spec,
      picture,
      status: "scheduled",
      scheduledAt,
      nextRunAt: scheduledAt,
      createdAt: now,
    });
    const total = await addTargetGroups(tx, id, await targetSegmentId(tx, { segmentId: input.segmentId ?? null, launchId: input.launchId ?? null }));
    await recordActionStatus(tx, { id, tenantId, status: "scheduled", total, done: 0, failed: 0 }, now);
    return { id, scheduledAt };
  });
}
