/**
 * The marketplaces' inbound webhooks (docs/integrations.md#inbound-webhooks-buyers): POST /api/hooks/{type}/{token},
 * one URL per integration type and tenant (`token`: the tenant's hooks_token). Each request is authenticated the
 * platform's own way with the integration's credential (Hotmart's hottok, Kiwify's signature); one that fails is 401
 * and recorded nowhere but in the address's failed-authentication bucket (an unknown token too), which answers 429 once
 * spent. The token is rotated with rotate-hooks-token (server/integrations/rotate-hooks-token.ts). An approved purchase or a refund is recorded once per platform, transaction and status
 * (server/launches/funnel/record-purchase.ts), and an approved one queues the buyer's removal from the lead groups of the launches
 * that ask for it (server/groups/actions/buyer-removals.ts); other events of the platform are acknowledged and ignored, so the platform
 * never disables the URL for them.
 */
import { and, eq } from "drizzle-orm";
import { integrations, tenants } from "../../db/schema";
import { bodyCap, PayloadTooLarge, payloadTooLargeResponse, readCappedBytes } from "../http/body-limit";
import { clientIp } from "../http/client-address";
import { errorResult, jsonHeaders, toResponse } from "../http/envelope";
import { consume, peek } from "../http/rate-limit";
import { hookFormats } from "../integrations/hook-formats";
import { readCredentials } from "../integrations/integration-view";
import { acceptsHooks, credentialFields, hookSecretField, integrationTypes, type IntegrationType } from "../integrations/types";
import { queueBuyerRemovals } from "../groups/actions/buyer-removals";
import { wakeGroupAction } from "../groups/actions/wake";
import { recordPurchase } from "../launches/funnel/record-purchase";
import { getServices } from "../services";

export const hooksPrefix = "/api/hooks/";
const hookBodyCap = bodyCap(hooksPrefix);

const fail = (status: number, message: string, code?: string, headers: Record<string, string> = {}) =>
  toResponse(errorResult(status, message, code, {}, headers));
const ok = (body: Record<string, unknown>) => new Response(JSON.stringify({ success: true, ...body }), { status: 200, headers: jsonHeaders });

export async function handleInboundHook(req: Request, now = new Date()): Promise<Response> {
  if (req.method !== "POST") return fail(405, "Marketplace webhooks are POSTed.", "method_not_allowed", { allow: "POST" });
  const url = new URL(req.url);
  const { db } = await getServices();
  // Failed authentications (an unknown token, a wrong signature) count against the address, in the bucket the REST
  // API's failed API keys use (failedAuth, keyed by /64: docs/security.md#per-address-keys); a blocked address is 429
  // before anything is looked up, so URLs and signatures cannot be guessed at speed.
  const ip = clientIp(req.headers);
  const blocked = await peek(db, "failedAuth", ip);
  if (!blocked.allowed) return fail(429, "Too many failed authentication attempts from this address; retry later.", "rate_limited", blocked.headers);
  const refused = async (status: number, message: string) => {
    await consume(db, "failedAuth", ip);
    return fail(status, message);
  };
  const [type = "", token = "", ...rest] = url.pathname.slice(hooksPrefix.length).split("/");
  if (rest.length > 0 || !(integrationTypes as readonly string[]).includes(type) || !/^[0-9a-f]{64}$/.test(token)) {
    return refused(404, "Unknown webhook URL: copy it from the dashboard (Integrações).");
  }
  const [tenant] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.hooksToken, token));
  if (!tenant) return refused(404, "Unknown webhook URL: copy it from the dashboard (Integrações).");
  if (!acceptsHooks(type)) {
    return fail(
      501,
      `${credentialFields[type as IntegrationType].label}'s webhook format and authentication could not be confirmed from its documentation, so its notices are not accepted yet (docs/integrations.md).`,
    );
  }
  const [integration] = await db
    .select()
    .from(integrations)
    .where(and(eq(integrations.tenantId, tenant.id), eq(integrations.type, type)));
  if (!integration) return fail(404, `The ${type} integration is not configured: add it in the dashboard (Integrações).`, "integration_not_configured");
  const secretField = hookSecretField[type];
  const secret = readCredentials(integration)[secretField];

  let raw: Uint8Array;
  try {
    raw = await readCappedBytes(req, hookBodyCap);
  } catch (err) {
    if (err instanceof PayloadTooLarge) return payloadTooLargeResponse(err.cap);
    throw err;
  }
  const format = hookFormats[type];
  // No secret stored: nothing can be verified, so nothing is accepted.
  if (!secret) return fail(401, `The ${type} integration has no ${secretField} yet: set it in Integrações (docs/integrations.md).`);
  if (!format.authentic({ headers: req.headers, url, raw }, secret)) {
    return refused(401, `The ${type} webhook's ${type === "hotmart" ? "hottok" : "signature"} does not match the integration's ${secretField}.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    return fail(400, "body: must be JSON", "validation_error");
  }
  const parsed = format.parse(body);
  if (parsed.kind === "invalid") return fail(400, `${parsed.field}: ${parsed.message}`, "validation_error");
  if (parsed.kind === "ignored") return ok({ event: parsed.event, recorded: false, ignored: true });
  try {
    const result = await recordPurchase(db, tenant.id, type, parsed.notice, now);
    // Buyers leave the lead groups (buyer-removals.ts): queued once per person and group, so a notice sent again (after
    // a 5xx here) finishes what its first handling left undone and repeats nothing.
    if (parsed.notice.status === "approved") {
      for (const id of await queueBuyerRemovals(db, tenant.id, type, parsed.notice.transaction, now)) wakeGroupAction(id);
    }
    return ok({ event: parsed.event, status: parsed.notice.status, recorded: result.recorded, launches: result.launches.length });
  } catch (err) {
    // 5xx: the platform sends it again, and recording it again is idempotent.
    console.error(`[hooks] a ${type} notice was not recorded:`, err instanceof Error ? err.message : err);
    return fail(503, "The notice could not be recorded now; send it again.");
  }
}
