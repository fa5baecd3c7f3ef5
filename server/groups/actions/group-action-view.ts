import type { groupActions } from "../../../db/schema";
import { toBrasiliaIso } from "../../time/brasilia";
import { groupCounts } from "./action-events";

/** How info-group-action and list-group-actions show an action (the picture's bytes and hash stay inside). */
export function groupActionView(a: typeof groupActions.$inferSelect) {
  const { picture_sha256: _hash, ...action } = a.action;
  return {
    id_action: a.id,
    name: a.name,
    status: a.status,
    action,
    id_segment: a.segmentId,
    id_launch: a.launchId,
    scheduled_at: toBrasiliaIso(a.scheduledAt),
    started_at: a.startedAt ? toBrasiliaIso(a.startedAt) : null,
    finished_at: a.finishedAt ? toBrasiliaIso(a.finishedAt) : null,
    created_at: toBrasiliaIso(a.createdAt),
    groups: groupCounts(a),
  };
}
