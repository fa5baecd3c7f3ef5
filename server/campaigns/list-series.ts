import { and, desc, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { campaignSeries, segments, seriesRuns } from "../../db/schema";
import { NotFound } from "../errors";
import { toBrasiliaIso } from "../time/brasilia";

/** Another tenant's series is not found either (no leak of ids). */
export const seriesNotFound = (id: string) => new NotFound(`Series ${id} not found.`);

/** The campaign of the series' run at `at` (its last started run, its future run). */
const runCampaign = (at: typeof campaignSeries.lastRunAt | typeof campaignSeries.nextRunAt) =>
  sql<string | null>`(select ${seriesRuns.campaignId} from ${seriesRuns} where ${seriesRuns.seriesId} = ${campaignSeries.id}
                        and ${seriesRuns.occurrenceAt} = ${at})`;

const columns = {
  series: campaignSeries,
  segmentName: segments.name,
  lastCampaignId: runCampaign(campaignSeries.lastRunAt),
  nextCampaignId: runCampaign(campaignSeries.nextRunAt),
};

type Listed = { series: typeof campaignSeries.$inferSelect; segmentName: string; lastCampaignId: string | null; nextCampaignId: string | null };

/** A series as the API answers it (list-series, edit-series, delete-series). */
export function seriesAnswer({ series: s, segmentName, lastCampaignId, nextCampaignId }: Listed) {
  const content = s.content as { message?: string };
  const [y, m, d] = s.schedule.until.split("-");
  return {
    id_series: s.id,
    name: s.name,
    status: s.status,
    message_type: s.messageType,
    id_segment: s.segmentId,
    segment_name: segmentName,
    message: content.message ?? "",
    repeat: {
      days: s.schedule.days as ("monday" | "tuesday" | "wednesday" | "thursday" | "friday" | "saturday" | "sunday")[],
      time: s.schedule.time,
      until: `${d}/${m}/${y}`,
    },
    next_run_at: s.nextRunAt ? toBrasiliaIso(s.nextRunAt) : null,
    next_id_campaign: nextCampaignId,
    last_run_at: s.lastRunAt ? toBrasiliaIso(s.lastRunAt) : null,
    runs: s.runs,
    last_id_campaign: lastCampaignId,
    created_at: toBrasiliaIso(s.createdAt),
  };
}

/** The tenant's series, newest first (stopped ones included: their runs stay campaigns). */
export async function listSeries(db: Db | Tx, tenantId: string) {
  const rows = await db
    .select(columns)
    .from(campaignSeries)
    .innerJoin(segments, eq(segments.id, campaignSeries.segmentId))
    .where(eq(campaignSeries.tenantId, tenantId))
    .orderBy(desc(campaignSeries.createdAt), desc(campaignSeries.id));
  return rows.map(seriesAnswer);
}

export async function findSeries(db: Db | Tx, tenantId: string, seriesId: string) {
  const [row] = await db
    .select(columns)
    .from(campaignSeries)
    .innerJoin(segments, eq(segments.id, campaignSeries.segmentId))
    .where(and(eq(campaignSeries.id, seriesId), eq(campaignSeries.tenantId, tenantId)));
  if (!row) throw seriesNotFound(seriesId);
  return row;
}
