import { z } from "zod";
import { audited, auditWrite } from "../audit/audited";
import { accountProcedure, router, sessionProcedure, type Context } from "../trpc";
import { wakeDispatch } from "../dispatch/wake";
import { cancelCampaign, pauseCampaign, resendDelivery, resumeCampaign } from "./control-campaign";
import { type CampaignContent, campaignContent } from "../dispatch/campaign-content";
import { createCampaign, type NewCampaign } from "./create-campaign";
import { createSeries } from "./create-series";
import { afterSeriesChange } from "./run-due-series";
import type { Repeat } from "./series-schema";
import { type CampaignInfo, infoCampaign } from "./info-campaign";
import { type PollResults, pollResults } from "./poll-results";
import { BadRequest } from "../errors";
import { idSegment } from "../segments/schema";
import { listCampaigns, listDeliveries } from "./list-campaigns";
import { sendTest } from "./send-test";
import {
  anyMessageType,
  campaignAction,
  campaignActionOutput,
  campaignStatus,
  createCarouselCampaignInput,
  createCarouselCampaignOutput,
  createMessageCampaignInput,
  createMessageCampaignOutput,
  createPollCampaignInput,
  createPollCampaignOutput,
  deliveryState,
  groupCountersOutput,
  idCampaign,
  infoCampaignInput,
  infoCampaignOutput,
  pauseReason,
  sendTestInput,
  sendTestOutput,
} from "./schema";
import { toBrasiliaIso } from "../time/brasilia";

const tags = ["Campaigns"];
const createErrors = [400, 401, 403, 404, 409, 422, 429, 500];
const actionErrors = [400, 401, 404, 409, 429, 500];

const action = (verb: "pause" | "resume" | "cancel", summary: string, run: typeof pauseCampaign, message: string) =>
  accountProcedure("editor")
    .meta({ openapi: { method: "POST", path: `/external/${verb}-campaign/{id_campaign}`, tags, summary, protect: true, errorResponses: actionErrors } })
    .input(campaignAction)
    .output(campaignActionOutput)
    .mutation(async ({ ctx, input }) => {
      const c = await run(ctx.db, ctx.tenantId, input.id_campaign, ctx.now, auditWrite(ctx, `campaign.${verb}`));
      return { success: true as const, message, id_campaign: c.id, status: c.status };
    });

type CommonInput = { name: string; id_segment: string; link_preview?: boolean; mention_all: boolean; scheduled_at?: string; repeat?: Repeat };

/**
 * Both create paths (and poll's): the campaign with its deliveries and a wake-up for the engine, or, with `repeat`,
 * the series and its first run as a scheduled campaign (docs/series.md); the common answer fields.
 */
export async function create(ctx: Context & { tenantId: string }, input: CommonInput, messageType: NewCampaign["messageType"], content: CampaignContent) {
  const campaign = {
    name: input.name,
    segmentId: input.id_segment,
    messageType,
    content: campaignContent(content),
    linkPreview: input.link_preview,
    mentionAll: input.mention_all,
  };
  const repeat = input.repeat;
  if (repeat) {
    if (input.scheduled_at !== undefined) throw new BadRequest("scheduled_at: not with repeat (the runs' times come from repeat.days and repeat.time)");
    const { series: s, run } = await audited(
      ctx,
      "series.create",
      (tx) => createSeries(tx, ctx.tenantId, { ...campaign, repeat }, ctx.now),
      (r) => r.series.id,
    );
    afterSeriesChange(ctx.tenantId, null, run);
    return {
      success: true as const,
      id_campaign: run.id,
      name: s.name,
      status: "pending" as const,
      scheduled_at: toBrasiliaIso(run.at),
      timestamp: ctx.now.toISOString(),
      id_series: s.id,
    };
  }
  const c = await audited(
    ctx,
    "campaign.create",
    (tx) => createCampaign(tx, ctx.tenantId, { ...campaign, scheduledAt: input.scheduled_at }, ctx.now),
    (r) => r.id,
  );
  wakeDispatch(c.id, { tenantId: ctx.tenantId, dueAt: c.nextRunAt });
  return {
    success: true as const,
    id_campaign: c.id,
    name: c.name,
    status: c.status,
    scheduled_at: c.scheduledAt ? toBrasiliaIso(c.scheduledAt) : null,
    timestamp: ctx.now.toISOString(),
    id_series: null,
  };
}

/**
 * info-campaign's answer. `readsAvailable`: the provider reports group reads (capabilities.receipts;
 * docs/decisions.md#evolution-api).
 */
function infoAnswer(c: CampaignInfo, readsAvailable: boolean, poll: PollResults | null) {
  const copy = c.monitoringCopy;
  return {
    success: true as const,
    id_campaign: c.id,
    name: c.name,
    status: c.status,
    pause_reason: c.pauseReason,
    message_type: c.messageType,
    id_segment: c.segmentId,
    segment_name: c.segmentName,
    groups: c.groups,
    channels: c.channels.map((ch) => ({ id_channel: ch.channelId, sent: ch.sent, pending: ch.pending, failed: ch.failed })),
    monitoring_group: copy
      ? { id_group: copy.groupId, id_channel: copy.channelId, status: copy.state, sent_at: copy.sentAt ? toBrasiliaIso(copy.sentAt) : null }
      : null,
    reads_available: readsAvailable,
    scheduled_at: c.scheduledAt ? toBrasiliaIso(c.scheduledAt) : null,
    created_at: toBrasiliaIso(c.createdAt),
    poll: poll && {
      question: poll.question,
      multiple_answers: poll.multipleAnswers,
      options: poll.options,
      votes_available: poll.votesAvailable,
    },
    id_series: c.seriesId,
    eta: c.eta ? toBrasiliaIso(c.eta) : null,
  };
}

export const campaignsRouter = router({
  createMessage: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-campaign/message",
        tags,
        summary: "Create a text or media campaign",
        protect: true,
        errorResponses: createErrors,
      },
      successStatus: 201,
      idempotent: true,
    })
    .input(createMessageCampaignInput)
    .output(createMessageCampaignOutput)
    .mutation(async ({ ctx, input }) => ({
      ...(await create(ctx, input, input.message_type, { message: input.message, media_url: input.media_url, file_name: input.file_name })),
      message_type: input.message_type,
    })),

  createCarousel: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-campaign/carousel",
        tags,
        summary: "Create a carousel campaign",
        protect: true,
        errorResponses: createErrors,
      },
      successStatus: 201,
      idempotent: true,
    })
    .input(createCarouselCampaignInput)
    .output(createCarouselCampaignOutput)
    .mutation(async ({ ctx, input }) => ({
      ...(await create(ctx, input, "carousel", { message: input.carousel_data.message, cards: input.carousel_data.cards })),
      message_type: "carousel" as const,
      cards_count: input.carousel_data.cards.length,
    })),

  createPoll: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-campaign/poll",
        tags,
        summary: "Create a poll campaign (enquete)",
        description:
          "Sends one WhatsApp poll to every group of the segment (and the monitoring group's copy). Votes per option, summed over the groups, " +
          "are in info-campaign's `poll` as they arrive. Paced, scheduled and queued like any campaign.",
        protect: true,
        errorResponses: createErrors,
      },
      successStatus: 201,
      idempotent: true,
    })
    .input(createPollCampaignInput)
    .output(createPollCampaignOutput)
    .mutation(async ({ ctx, input }) => {
      const most = ctx.provider.capabilities.pollOptions;
      if (input.poll.options.length > most) {
        throw new BadRequest(`poll.options: at most ${most} options on this messaging platform (${ctx.provider.name}); got ${input.poll.options.length}`);
      }
      return {
        ...(await create(ctx, { ...input, mention_all: false }, "poll", { message: input.poll.question, poll: input.poll })),
        message_type: "poll" as const,
        options_count: input.poll.options.length,
      };
    }),

  sendTest: accountProcedure("editor")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/send-test",
        tags,
        summary: "Send a message once to the test groups (Enviar teste)",
        description:
          "Sends the body of create-campaign/message or /carousel once, now and unpaced, to each of the settings' test_groups, and answers per " +
          "group. Counted in no campaign or partner statistic. 400 `no_test_groups` when the settings list none; at most 10 per 10 minutes per " +
          "tenant (429). With id_segment the texts are those of the segment's first groups (docs/decisions.md#test-send).",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500, 503],
      },
    })
    .input(sendTestInput)
    .output(sendTestOutput)
    .mutation(async ({ ctx, input }) => {
      const c = input.carousel_data;
      const results = await sendTest(
        ctx.db,
        ctx.provider,
        ctx.tenantId,
        {
          messageType: c ? "carousel" : (input.message_type ?? "text"),
          content: c ? { message: c.message, cards: c.cards } : { message: input.message ?? "", media_url: input.media_url, file_name: input.file_name },
          linkPreview: input.link_preview,
          mentionAll: input.mention_all,
          segmentId: input.id_segment,
        },
        ctx.now,
      );
      return { success: true as const, results, timestamp: ctx.now.toISOString() };
    }),

  info: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/info-campaign/{id_campaign}",
        tags,
        summary: "Status and progress of a campaign",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(infoCampaignInput)
    .output(infoCampaignOutput)
    .query(async ({ ctx, input }) => {
      const c = await infoCampaign(ctx.db, ctx.tenantId, input.id_campaign, ctx.now);
      const poll = c.messageType === "poll" ? await pollResults(ctx.db, c.id, await ctx.provider.pollVotesAvailable()) : null;
      return infoAnswer(c, ctx.provider.capabilities.receipts, poll);
    }),

  pause: action("pause", "Pause a campaign (until resumed)", pauseCampaign, "Campaign paused"),
  resume: action("resume", "Resume a paused campaign", resumeCampaign, "Campaign resumed"),
  cancel: action("cancel", "Cancel a campaign (groups not yet sent stay unsent)", cancelCampaign, "Campaign canceled"),

  /** Dashboard: the tenant's campaigns with live counters (of one segment: a launch's Cronograma), and one campaign's deliveries. */
  list: accountProcedure("viewer")
    .input(z.object({ id_segment: idSegment.optional() }).optional())
    .output(
      z.array(
        z.object({
          id_campaign: z.string(),
          name: z.string(),
          status: campaignStatus,
          pause_reason: pauseReason.nullable(),
          message_type: anyMessageType,
          id_segment: z.string(),
          segment_name: z.string(),
          groups: groupCountersOutput,
          scheduled_at: z.string().nullable(),
          created_at: z.string(),
          id_series: z.string().nullable(),
        }),
      ),
    )
    .query(async ({ ctx, input }) =>
      (await listCampaigns(ctx.db, ctx.tenantId, input?.id_segment)).map((c) => ({
        id_campaign: c.id,
        name: c.name,
        status: c.status,
        pause_reason: c.pauseReason,
        message_type: c.messageType,
        id_segment: c.segmentId,
        segment_name: c.segmentName,
        groups: c.groups,
        scheduled_at: c.scheduledAt ? toBrasiliaIso(c.scheduledAt) : null,
        created_at: toBrasiliaIso(c.createdAt),
        id_series: c.seriesId,
      })),
    ),
  deliveries: accountProcedure("viewer")
    .input(z.object({ id_campaign: idCampaign }))
    .output(
      z.array(
        z.object({
          id_group: z.string(),
          name: z.string(),
          id_channel: z.string(),
          monitoring: z.boolean(),
          state: deliveryState,
          attempts: z.number(),
          error: z.string().nullable(),
          sent_at: z.string().nullable(),
          acked_at: z.string().nullable(),
          read_at: z.string().nullable(),
          text: z.string().nullable(),
        }),
      ),
    )
    .query(async ({ ctx, input }) =>
      (await listDeliveries(ctx.db, ctx.tenantId, input.id_campaign)).map((d) => ({
        id_group: d.groupId,
        name: d.groupName,
        id_channel: d.channelId,
        monitoring: d.isMonitoring,
        state: d.state,
        attempts: d.attempts,
        error: d.error,
        sent_at: d.sentAt?.toISOString() ?? null,
        acked_at: d.ackedAt?.toISOString() ?? null,
        read_at: d.readAt?.toISOString() ?? null,
        text: d.text,
      })),
    ),
  /**
   * Dashboard only ("Enviar novamente", after confirmation): one failed group goes back to pending
   * under the same delivery key; a finished campaign reopens to send it.
   */
  resendDelivery: sessionProcedure("editor")
    .input(z.object({ id_campaign: idCampaign, id_group: z.string().min(1).max(200) }))
    .output(z.object({ id_campaign: z.string(), status: campaignStatus }))
    .mutation(async ({ ctx, input }) => {
      const c = await resendDelivery(ctx.db, ctx.tenantId, input.id_campaign, input.id_group, ctx.now, auditWrite(ctx, "campaign.resend"));
      return { id_campaign: c.id, status: c.status };
    }),
});
