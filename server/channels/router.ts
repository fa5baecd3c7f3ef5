import { audited, auditWrite } from "../audit/audited";
import { z } from "zod";
import { accountProcedure, router } from "../trpc";
import { createChannel } from "./create-channel";
import { editChannel } from "./edit-channel";
import { listChannels } from "./list-channels";
import { findChannel } from "./find-channel";
import { channelAnswers } from "./channel-answer";
import { listGroups } from "./list-groups";
import { lastGatewayCheck, runGatewayCheck } from "../messaging/gateway-check";
import { channelPairing, disconnectChannel } from "./pair-channel";
import {
  channelPairingOutput,
  channelSummary,
  idChannel,
  createChannelInput,
  createChannelOutput,
  editChannelInput,
  editChannelOutput,
  gatewayCheckOutput,
  group,
  infoChannelInput,
  infoChannelOutput,
  listChannelsOutput,
  listGroupsInput,
  listGroupsOutput,
} from "./schema";

const tags = ["Channels"];
const channelsDescription =
  "Beyond the published API (CONTRACT §7; additive: the spec's fields are unchanged): each channel carries its number (`phone`), its number's " +
  "`health` (state, why, since, until, today's usage and caps, warm-up day) and its own `limits` (the number_health fields; null: the " +
  "tenant's value). Channels are listed oldest first; another tenant's channel is 404 like a missing one. docs/numbers.md.";
const phoneNumber = z.string().regex(/^\d{10,15}$/, "must be the number with country code, digits only");

export const channelsRouter = router({
  create: accountProcedure("admin")
    .meta({
      openapi: {
        method: "POST",
        path: "/external/create-channel",
        tags,
        summary: "Create a channel",
        protect: true,
        errorResponses: [400, 401, 403, 409, 422, 429, 500],
      },
      successStatus: 201,
      idempotent: true,
    })
    .input(createChannelInput)
    .output(createChannelOutput)
    .mutation(async ({ ctx, input }) => {
      const ch = await createChannel(ctx.db, ctx.provider, ctx.tenantId, input.name, ctx.now, auditWrite(ctx, "channel.create"));
      return {
        success: true as const,
        name: ch.name,
        id_channel: ch.id,
        channel_ref: ch.providerRef,
        status: ch.status,
        timestamp: ctx.now.toISOString(),
      };
    }),

  edit: accountProcedure("admin")
    .meta({
      openapi: {
        method: "PUT",
        path: "/external/edit-channel/{id_channel}",
        tags,
        summary: "Rename a channel; beyond the published API, change its own budget (limits)",
        description: `Answers the spec's fields and the channel object of info-channel. ${channelsDescription}`,
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(editChannelInput)
    .output(editChannelOutput)
    .mutation(async ({ ctx, input }) => {
      const ch = await audited(
        ctx,
        "channel.edit",
        (tx) => editChannel(tx, ctx.tenantId, input.id_channel, { name: input.name, limits: input.limits }, ctx.now),
        () => input.id_channel,
      );
      const [answer] = await channelAnswers(ctx.db, ctx.tenantId, [ch], ctx.now);
      return { success: true as const, ...answer, message: "Channel updated", timestamp: ctx.now.toISOString() };
    }),

  listAll: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-channels",
        tags,
        summary: "List the channels with their number, health and limits (beyond the published API)",
        description: channelsDescription,
        protect: true,
        errorResponses: [401, 429, 500],
      },
    })
    .output(listChannelsOutput)
    .query(async ({ ctx }) => ({
      success: true as const,
      channels: await channelAnswers(ctx.db, ctx.tenantId, await listChannels(ctx.db, ctx.tenantId), ctx.now),
    })),

  info: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/info-channel/{id_channel}",
        tags,
        summary: "One channel with its number, health and limits (beyond the published API)",
        description: channelsDescription,
        protect: true,
        errorResponses: [400, 401, 404, 429, 500],
      },
    })
    .input(infoChannelInput)
    .output(infoChannelOutput)
    .query(async ({ ctx, input }) => {
      const [answer] = await channelAnswers(ctx.db, ctx.tenantId, [await findChannel(ctx.db, ctx.tenantId, input.id_channel)], ctx.now);
      return { success: true as const, ...answer };
    }),

  groups: accountProcedure("viewer")
    .meta({
      openapi: {
        method: "GET",
        path: "/external/list-groups/{id_channel}",
        tags,
        summary: "List the groups of a connected channel",
        protect: true,
        errorResponses: [400, 401, 404, 429, 500, 503],
      },
    })
    .input(listGroupsInput)
    .output(listGroupsOutput)
    .query(async ({ ctx, input }) => {
      const { channel, groups } = await listGroups(ctx.db, ctx.provider, ctx.tenantId, input.id_channel);
      // The spec's groups carry id_group and name only; `admins_only` is the dashboard's (groupsDetailed).
      return {
        success: true as const,
        id_channel: channel.id,
        total_groups: groups.length,
        groups: groups.map(({ id_group, name }) => ({ id_group, name })),
        timestamp: ctx.now.toISOString(),
      };
    }),

  /** Dashboard: the groups with what the platform says about them (admins-only groups). */
  groupsDetailed: accountProcedure("viewer")
    .input(listGroupsInput)
    .output(z.object({ id_channel: z.string(), total_groups: z.number().int(), groups: z.array(group.extend({ admins_only: z.boolean() })) }))
    .query(async ({ ctx, input }) => {
      const { channel, groups } = await listGroups(ctx.db, ctx.provider, ctx.tenantId, input.id_channel);
      return {
        id_channel: channel.id,
        total_groups: groups.length,
        groups: groups.map((g) => ({ id_group: g.id_group, name: g.name, admins_only: g.adminsOnly === true })),
      };
    }),

  /** Dashboard: the tenant's channels. */
  list: accountProcedure("viewer")
    .output(z.array(channelSummary))
    .query(async ({ ctx }) =>
      (await listChannels(ctx.db, ctx.tenantId)).map((c) => ({
        id_channel: c.id,
        name: c.name,
        status: c.status,
        channel_ref: c.providerRef,
        created_at: c.createdAt.toISOString(),
      })),
    ),

  /**
   * Dashboard: pairing screen (QR code, the latest pairing code with its expiry, status). A query never starts a pairing
   * (a GET, so a cross-site link could send it): asking for a pairing code is requestPairing, a mutation; a
   * `phone_number` here is refused (strict input).
   */
  pairing: accountProcedure("viewer")
    .input(z.strictObject({ id_channel: idChannel }))
    .output(channelPairingOutput)
    .query(({ ctx, input }) => channelPairing(ctx.db, ctx.provider, ctx.tenantId, input.id_channel)),

  /** Dashboard: ask for a pairing code for a number, or a new QR code session ("Gerar novamente"). */
  requestPairing: accountProcedure("editor")
    .input(z.object({ id_channel: idChannel, phone_number: phoneNumber.optional() }))
    .output(channelPairingOutput)
    .mutation(({ ctx, input }) => channelPairing(ctx.db, ctx.provider, ctx.tenantId, input.id_channel, { phoneNumber: input.phone_number, restart: true })),

  /** Dashboard: log the number out of the platform. */
  disconnect: accountProcedure("admin")
    .input(z.object({ id_channel: idChannel }))
    .output(z.object({ success: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await disconnectChannel(ctx.db, ctx.provider, ctx.tenantId, input.id_channel, auditWrite(ctx, "channel.disconnect"));
      return { success: true as const };
    }),

  /** Dashboard: which platform is behind the channels and what it can send to groups. */
  platform: accountProcedure("viewer")
    .output(
      z.object({
        provider: z.enum(["simulator", "evolution"]),
        capabilities: z.object({
          carousel: z.boolean(),
          forward: z.boolean(),
          linkPreview: z.boolean(),
          mentionAll: z.boolean(),
          receipts: z.boolean(),
          pollOptions: z.number().int(),
        }),
      }),
    )
    .query(({ ctx }) => ({ provider: ctx.provider.name, capabilities: { ...ctx.provider.capabilities } })),

  /**
   * Dashboard: whether the gateway answered its last start-up check (run now when none ran yet); null with the
   * simulator. The tenant's view only: the version, warnings and reminders are the operator's (server log).
   */
  gatewayCheck: accountProcedure("viewer")
    .output(gatewayCheckOutput.nullable())
    .query(async ({ ctx }) => {
      const check = lastGatewayCheck() ?? (await runGatewayCheck(ctx.provider));
      return check && { provider: check.provider, checkedAt: check.checkedAt, reachable: check.reachable };
    }),
});
