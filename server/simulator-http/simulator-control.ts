import { z } from "zod";
import { findChannel } from "../channels/find-channel";
import { findCampaign } from "../campaigns/find-campaign";
import { listChannels } from "../channels/list-channels";
import { Conflict, DomainError, NotFound } from "../errors";
import type { Db } from "../../db/client";
import { describeIssues, domainErrorResult, errorResult, jsonHeaders, toResponse as send, type HttpResult } from "../http/envelope";
import { PayloadTooLarge, readCappedText } from "../http/body-limit";
import { clientIp } from "../http/client-address";
import { consume } from "../http/rate-limit";
import { numberLossReasons } from "../messaging/provider";
import { SIMULATOR_GROUP_LIMIT, simulatedOwnNumber, type SimulatorProvider } from "../messaging/simulator";
import { samePhone } from "../phones/phone";
import { resolveRestCallerAt } from "../resolve-caller";
import { idPattern } from "../ids";
import { illFormedMessage, isIllFormed } from "../text";
import { getServices } from "../services";

/** At least one of: online or not; the platform taking the number off (with a reason); its rate limit (null: none). */
const stateBody = z
  .object({
    connected: z.boolean().optional(),
    health: z.enum(numberLossReasons).optional(),
    rate_limit_per_minute: z.number().int().min(1).max(100_000).nullable().optional(),
    /** Group creations past N made in a rolling hour are refused as rate-overlimit (0: every one); null: no limit. */
    group_create_rate_limit_per_hour: z.number().int().min(0).max(10_000).nullable().optional(),
  })
  .refine(
    (b) => b.connected !== undefined || b.health !== undefined || b.rate_limit_per_minute !== undefined || b.group_create_rate_limit_per_hour !== undefined,
    "give connected, health, rate_limit_per_minute and/or group_create_rate_limit_per_hour",
  )
  .refine((b) => !(b.health && b.connected === true), { message: "a number taken off (health) cannot be connected: true in the same call", path: ["health"] });
const failuresBody = z.union([z.object({ fail_next: z.number().int().min(0).max(1_000_000) }), z.object({ always: z.boolean() })]);
const latencyBody = z.object({ ms: z.number().int().min(0).max(60_000) });
/** A participant: a phone number (digits with country code) or a platform id such as a LID (`<digits>@lid`). */
const participant = z.string().regex(/^\d{8,20}(@lid)?$/, "must be a phone number with country code (digits) or a LID (<digits>@lid)");
const people = z.array(participant).min(1).max(SIMULATOR_GROUP_LIMIT);
const count = z.number().int().min(1).max(SIMULATOR_GROUP_LIMIT);
const joinBody = z.object({ participant });
const participantsBody = z.union([
  z.object({ join: z.union([count, people]) }).strict(),
  z.object({ leave: z.union([count, people]) }).strict(),
  z.object({ promote: people }).strict(),
]);
/**
 * A member's post: who (a member's phone, digits with country code, or the LID they are listed by), the text, and optionally
 * the id of a post to deliver again; `phone`: a LID sender's number, carried beside it (as Evolution's `participantAlt`).
 */
const postBody = z
  .object({
    from: participant,
    phone: z
      .string()
      .regex(/^\d{8,20}$/, "must be a phone number with country code (digits)")
      .optional(),
    text: z.string().max(65_536),
    id_message: z
      .string()
      .regex(/^[A-Za-z0-9]{1,64}$/, "must be the id_message of an earlier post")
      .optional(),
  })
  .strict();
const groupStateBody = z
  .object({ exists: z.boolean().optional(), admin: z.boolean().optional() })
  .strict()
  .refine((b) => b.exists !== undefined || b.admin !== undefined, "give exists and/or admin");

/** Votes per option text: each option's votes in the group become exactly N (docs/simulator.md#polls). */
const pollVotesBody = z
  .object({
    votes: z
      .record(z.string().min(1).max(100), z.number().int().min(0).max(SIMULATOR_GROUP_LIMIT))
      .refine((v) => Object.keys(v).length > 0, "give at least one option and its number of votes"),
  })
  .strict();

const ok = (data: Record<string, unknown>): HttpResult => ({ status: 200, body: JSON.stringify({ success: true, ...data }), headers: jsonHeaders });

async function parse<T>(req: Request, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    raw = JSON.parse((await readCappedText(req)) || "{}");
  } catch (err) {
    if (err instanceof PayloadTooLarge) throw new DomainError(413, "payload_too_large", err.message);
    throw new DomainError(400, "malformed_json", "The request body is not valid JSON.");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new DomainError(400, "validation_error", describeIssues(parsed.error.issues));
  return parsed.data;
}

/** Text from a path segment or query parameter: not valid percent-encoding, NUL or a lone surrogate is a 400 naming `field`. */
function textParam(value: string, field: string, encoded: boolean): string {
  let decoded = value;
  if (encoded) {
    try {
      decoded = decodeURIComponent(value);
    } catch {
      throw new DomainError(400, "validation_error", `${field}: is not valid percent-encoding`);
    }
  }
  if (isIllFormed(decoded)) throw new DomainError(400, "validation_error", `${field}: ${illFormedMessage}`);
  return decoded;
}

const channelToken = idPattern("channel");
const campaignToken = idPattern("campaign");

/**
 * The caller's tenant, under the same limits as the REST facade: a blocked address is 429 before the
 * credentials are looked at, a missing or invalid key counts as a failed authentication of the address,
 * and an API key spends its per-minute points here as on /api/external/*.
 */
async function authorize(db: Db, headers: Headers): Promise<{ tenantId: string; headers: Record<string, string> } | { refused: HttpResult }> {
  const ip = clientIp(headers);
  const { caller, blocked } = await resolveRestCallerAt(db, headers, new Date(), ip);
  if (!blocked.allowed) {
    return { refused: errorResult(429, "Too many failed authentication attempts from this address; retry later.", "rate_limited", {}, blocked.headers) };
  }
  if (caller.kind === "anonymous") await consume(db, "failedAuth", ip);
  if (caller.kind !== "apiKey") return { refused: errorResult(401, "API key is invalid or absent. Send it in the x-api-key header.") };
  const limit = await consume(db, "apiKey", caller.apiKeyId);
  if (!limit.allowed) return { refused: errorResult(429, "Rate limit exceeded; retry after the time in Retry-After.", "rate_limited", {}, limit.headers) };
  return { tenantId: caller.tenantId, headers: limit.headers };
}

/**
 * /api/simulator/*: control and inspection of the simulated platform (docs/decisions.md#the-simulator),
 * served only while the simulator is the provider, with the tenant's API key.
 */
export async function handleSimulatorRequest(req: Request): Promise<Response> {
  let limitHeaders: Record<string, string> = {};
  const toResponse = (r: HttpResult) => send({ ...r, headers: { ...r.headers, ...limitHeaders } });
  try {
    const services = await getServices();
    const db = services.db;
    // Not `instanceof`: in the Next.js server the services are built by instrumentation's bundle and this
    // route has its own copy of the SimulatorProvider class, so instanceof is always false there.
    if (services.provider.name !== "simulator") return toResponse(errorResult(404, "The simulator is not the messaging provider."));
    const provider = services.provider as SimulatorProvider;
    const auth = await authorize(db, req.headers);
    if ("refused" in auth) return toResponse(auth.refused);
    const { tenantId } = auth;
    limitHeaders = auth.headers;
    const url = new URL(req.url);
    const path = url.pathname.replace(/^\/api\/simulator/, "");

    if (req.method === "GET" && path === "/messages") {
      const q = url.searchParams;
      const param = (name: string) => {
        const v = q.get(name);
        return v === null ? undefined : textParam(v, name, false);
      };
      const [wanted, groupId, campaignId] = [param("id_channel"), param("id_group"), param("id_campaign")];
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id);
      const rows = await provider.messages({
        channelIds: wanted ? channelIds.filter((id) => id === wanted) : channelIds,
        groupId,
        campaignId,
      });
      return toResponse(
        ok({
          messages: rows.map((r) => ({
            id_channel: r.channelId,
            id_group: r.groupId,
            id_campaign: r.campaignId,
            message_type: r.messageType,
            text: r.text,
            media_url: r.mediaUrl,
            file_name: r.fileName,
            cards: r.cards,
            poll: r.poll,
            mention_all: r.mentionAll,
            mentions: r.mentions ?? [],
            link_preview: r.linkPreview,
            delivery_key: r.deliveryKey,
            message_id: r.messageId,
            sent_at: r.sentAt.toISOString(),
            read_at: r.readAt?.toISOString() ?? null,
          })),
        }),
      );
    }
    const channelState = req.method === "POST" ? path.match(/^\/channels\/([^/]+)\/state$/) : null;
    if (channelState) {
      const body = await parse(req, stateBody);
      const channelId = textParam(channelState[1], "id_channel", true);
      if (!channelToken.test(channelId)) throw new DomainError(400, "validation_error", "id_channel: must be a channel token (channel_<uuid>)");
      const channel = await findChannel(db, tenantId, channelId);
      if (body.rate_limit_per_minute !== undefined) await provider.setRateLimit(channel.id, body.rate_limit_per_minute);
      if (body.group_create_rate_limit_per_hour !== undefined) await provider.setGroupCreateLimit(channel.id, body.group_create_rate_limit_per_hour);
      if (body.health) await provider.setHealth(channel.id, body.health);
      else if (body.connected !== undefined) await provider.setOnline(channel.id, body.connected);
      const now = await provider.channelControls(channel.id);
      if (!now) throw new NotFound(`Channel ${channel.id} is unknown to the platform.`);
      return toResponse(
        ok({
          id_channel: channel.id,
          connected: now.connected,
          health: now.health,
          rate_limit_per_minute: now.rateLimitPerMinute,
          group_create_rate_limit_per_hour: await provider.groupCreateLimit(channel.id),
        }),
      );
    }
    if (req.method === "GET" && path === "/group-creations") {
      // Every group creation asked of the platform (made, or refused as rate-limited), oldest first.
      const wanted = url.searchParams.get("id_channel");
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id).filter((id) => wanted === null || id === wanted);
      const rows = await provider.groupCreations(channelIds);
      return toResponse(
        ok({ creations: rows.map((r) => ({ id_channel: r.channelId, name: r.name, id_group: r.groupId, outcome: r.outcome, at: r.at.toISOString() })) }),
      );
    }
    const invite = req.method === "POST" ? path.match(/^\/invites\/([^/]+)\/join$/) : null;
    if (invite) {
      // Invite codes are public: anyone who has the link joins, whichever tenant's key asks.
      const body = await parse(req, joinBody);
      const code = textParam(invite[1], "code", true);
      const target = await provider.inviteTarget(code);
      if (!target) throw new NotFound(`Invite code ${code} is unknown or was revoked.`);
      const outcome = await provider.joinParticipants(target.channelId, target.groupId, [body.participant]);
      if (outcome.kind === "gone") throw new NotFound(`Invite code ${code} is unknown or was revoked.`);
      if (outcome.kind === "full") throw new Conflict(`The group is full (${SIMULATOR_GROUP_LIMIT} participants).`, "group_full");
      return toResponse(ok({ id_group: target.groupId, participant: body.participant, joined: outcome.joined.length > 0, members: outcome.members }));
    }
    const groupAction = req.method === "POST" ? path.match(/^\/groups\/([^/]+)\/(failures|participants|invite\/revoke|state)$/) : null;
    if (groupAction) {
      const action = groupAction[2];
      const groupId = textParam(groupAction[1], "id_group", true);
      const read = { failures: failuresBody, participants: participantsBody, "invite/revoke": z.object({}), state: groupStateBody }[
        action
      ] as z.ZodType<unknown>;
      const body = await parse(req, read);
      // Only the caller's own channels' groups: another tenant's group is as unknown as a missing one.
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id);
      const channelId = await provider.channelOfGroup(channelIds, groupId);
      if (!channelId) throw new NotFound(`Group ${groupId} not found in your channels.`);
      if (action === "failures") {
        const spec = body as z.infer<typeof failuresBody>;
        await provider.setFailures(channelId, groupId, "always" in spec ? { always: spec.always } : { failNext: spec.fail_next });
        return toResponse(ok({ id_group: groupId, ...spec }));
      }
      if (action === "participants") {
        const spec = body as z.infer<typeof participantsBody>;
        if ("join" in spec) {
          const outcome = await provider.joinParticipants(channelId, groupId, spec.join);
          if (outcome.kind === "gone") throw new NotFound(`Group ${groupId} no longer exists for its channel.`);
          if (outcome.kind === "full")
            throw new Conflict(`The group would pass ${SIMULATOR_GROUP_LIMIT} participants (it has ${outcome.members}).`, "group_full");
          return toResponse(ok({ id_group: groupId, joined: outcome.joined, left: [], members: outcome.members }));
        }
        if ("promote" in spec) {
          const promoted = await provider.promoteMembers(channelId, groupId, spec.promote);
          return toResponse(ok({ id_group: groupId, joined: [], left: [], promoted, members: (await provider.participants(groupId)).length }));
        }
        if (Array.isArray(spec.leave) && spec.leave.some((p) => samePhone(p, simulatedOwnNumber(channelId)))) {
          throw new DomainError(400, "validation_error", "leave: the channel's own number cannot leave (use the state endpoint with exists: false)");
        }
        // "The N most recent" never takes the numbers of the tenant's channels (they are staff, like the admins).
        const staff = (await listChannels(db, tenantId)).map((c) => simulatedOwnNumber(c.id));
        const { left, members } = await provider.leaveParticipants(channelId, groupId, spec.leave, typeof spec.leave === "number" ? staff : []);
        return toResponse(ok({ id_group: groupId, joined: [], left, members }));
      }
      if (action === "invite/revoke") {
        const { inviteUrl, revoked } = await provider.revokeInvite(channelId, groupId);
        return toResponse(ok({ id_group: groupId, revoked, invite_url: inviteUrl }));
      }
      const state = await provider.setGroupState(channelId, groupId, body as z.infer<typeof groupStateBody>);
      return toResponse(ok({ id_group: groupId, ...state }));
    }
    const groupPosts = path.match(/^\/groups\/([^/]+)\/messages$/);
    if (groupPosts && (req.method === "POST" || req.method === "GET")) {
      // Members' messages (docs/simulator.md#members-post): POST as a member (the service receives it as from the
      // platform), GET the group's posts with `deleted` once an admin deleted one for everyone.
      const groupId = textParam(groupPosts[1], "id_group", true);
      const body = req.method === "POST" ? await parse(req, postBody) : null;
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id);
      const channelId = await provider.channelOfGroup(channelIds, groupId);
      if (!channelId) throw new NotFound(`Group ${groupId} not found in your channels.`);
      if (body) {
        const outcome = await provider.postMessage(channelId, groupId, body.from, body.text, body.id_message, body.phone);
        if (outcome.kind === "not_member") throw new DomainError(400, "validation_error", `from: ${body.from} is not a member of ${groupId}`);
        return toResponse(ok({ id_message: outcome.idMessage }));
      }
      const posts = await provider.groupPosts(groupId);
      return toResponse(
        ok({
          id_group: groupId,
          messages: posts.map((p) => ({
            id_message: p.messageId,
            from: p.sender,
            text: p.text,
            at: p.at.toISOString(),
            deleted: p.deletedAt !== null,
            deleted_at: p.deletedAt?.toISOString() ?? null,
          })),
        }),
      );
    }
    const groupInfo = req.method === "GET" ? path.match(/^\/groups\/([^/]+)\/participants$/) : null;
    if (groupInfo) {
      const groupId = textParam(groupInfo[1], "id_group", true);
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id);
      const channelId = await provider.channelOfGroup(channelIds, groupId);
      if (!channelId) throw new NotFound(`Group ${groupId} not found in your channels.`);
      const rows = await provider.participants(groupId);
      return toResponse(
        ok({
          id_group: groupId,
          own_number: simulatedOwnNumber(channelId),
          members: rows.length,
          participants: rows.map((r) => ({ participant: r.participant, admin: r.admin, joined_at: r.joinedAt.toISOString() })),
        }),
      );
    }
    const groupView = req.method === "GET" ? path.match(/^\/groups\/([^/]+)$/) : null;
    if (groupView) {
      // A group's settings as the platform keeps them (CONTRACT §8) and its change log (one system notice each).
      const groupId = textParam(groupView[1], "id_group", true);
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id);
      const channelId = await provider.channelOfGroup(channelIds, groupId);
      if (!channelId) throw new NotFound(`Group ${groupId} not found in your channels.`);
      // A derived group gets its row on first use, as any call of the platform would make it.
      await provider.groupSettings(channelId, groupId).catch(() => null);
      const view = await provider.groupSettingsOf.view(groupId);
      if (!view) throw new NotFound(`Group ${groupId} not found in your channels.`);
      const changes = await provider.groupSettingsOf.changes(groupId);
      return toResponse(
        ok({
          id_group: groupId,
          subject: view.subject,
          description: view.description,
          picture_sha256: view.pictureSha256,
          announce: view.announce,
          locked: view.locked,
          members: view.members.length,
          admins: view.admins,
          changes: changes.map((c) => ({ id_channel: c.channelId, change: c.change, at: c.at.toISOString() })),
        }),
      );
    }
    const pollVotes = req.method === "POST" ? path.match(/^\/polls\/([^/]+)\/([^/]+)\/votes$/) : null;
    if (pollVotes) {
      const body = await parse(req, pollVotesBody);
      const campaignId = textParam(pollVotes[1], "id_campaign", true);
      const groupId = textParam(pollVotes[2], "id_group", true);
      if (!campaignToken.test(campaignId)) throw new DomainError(400, "validation_error", "id_campaign: must be a campaign token (campaign_<uuid>)");
      // Another tenant's campaign is as unknown as a missing one.
      const campaign = await findCampaign(db, tenantId, campaignId);
      if (campaign.messageType !== "poll") throw new DomainError(400, "validation_error", `id_campaign: campaign ${campaignId} is not a poll campaign`);
      const channelIds = (await listChannels(db, tenantId)).map((c) => c.id);
      const outcome = await provider.castPollVotes(channelIds, campaignId, groupId, body.votes);
      if (outcome.kind === "no_poll") throw new NotFound(`The poll of ${campaignId} has not been sent to group ${groupId}.`);
      if (outcome.kind === "unknown_options") {
        const allowed = outcome.options.map((o) => JSON.stringify(o)).join(", ");
        throw new DomainError(400, "validation_error", `votes.${outcome.unknown[0]}: is not an option of the poll (options: ${allowed})`);
      }
      return toResponse(ok({ id_campaign: campaignId, id_group: groupId, votes: body.votes }));
    }
    if (req.method === "POST" && path === "/latency") {
      const body = await parse(req, latencyBody);
      await provider.setLatency(tenantId, body.ms);
      return toResponse(ok({ ms: body.ms }));
    }
    throw new NotFound(`No simulator endpoint ${req.method} ${url.pathname}.`);
  } catch (err) {
    if (err instanceof DomainError) return toResponse(domainErrorResult(err));
    console.error("[simulator] request failed", err);
    return toResponse(errorResult(500, "Internal server error"));
  }
}
