import { z } from "zod";
import { findChannel } from "../channels/find-channel";
import { listChannels } from "../channels/list-channels";
import { DomainError, NotFound } from "../errors";
import type { Db } from "../../db/client";
import { describeIssues, domainErrorResult, errorResult, jsonHeaders, toResponse as send, type HttpResult } from "../http/envelope";
import { PayloadTooLarge, readCappedText } from "../http/body-limit";
import { clientIp } from "../http/client-address";
import { consume } from "../http/rate-limit";
import type { SimulatorProvider } from "../messaging/simulator";
import { resolveRestCallerAt } from "../resolve-caller";
import { idPattern } from "../ids";
import { illFormedMessage, isIllFormed } from "../text";
import { getServices } from "../services";

const stateBody = z.object({ connected: z.boolean() });
const failuresBody = z.union([z.object({ fail_next: z.number().int().min(0).max(1_000_000) }), z.object({ always: z.boolean() })]);
const latencyBody = z.object({ ms: z.number().int().min(0).max(60_000) });

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
            mention_all: r.mentionAll,
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
      await provider.setOnline(channel.id, body.connected);
      return toResponse(ok({ id_channel: channel.id, connected: body.connected }));
    }
    const groupFailures = req.method === "POST" ? path.match(/^\/groups\/([^/]+)\/failures$/) : null;
    if (groupFailures) {
      const body = await parse(req, failuresBody);
      const groupId = textParam(groupFailures[1], "id_group", true);
      // Only the caller's own channels' groups: another tenant's group is as unknown as a missing one.
      const mine = (await listChannels(db, tenantId)).filter((c) => provider.groupsOf(c.id).some((g) => g.id_group === groupId));
      if (mine.length === 0) throw new NotFound(`Group ${groupId} not found in your channels.`);
      for (const channel of mine) {
        await provider.setFailures(channel.id, groupId, "always" in body ? { always: body.always } : { failNext: body.fail_next });
      }
      return toResponse(ok({ id_group: groupId, ...body }));
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
