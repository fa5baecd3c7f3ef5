import { bodyCap, PayloadTooLarge, payloadTooLargeResponse, readCappedText } from "../http/body-limit";
import { getServices } from "../services";
import { webhookTokenHeader, type EvolutionProvider } from "../messaging/evolution";
import type { MessagingProvider } from "../messaging/provider";

const json = (status: number, body: Record<string, unknown>) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** Gateways post batches of receipts (and group lists); anything bigger is not one of ours. */
const MAX_BODY_BYTES = bodyCap("/api/evolution/webhook/");

/**
 * POST /api/evolution/webhook/{id_channel} with the secret in the `x-webhook-token` header (how every
 * instance is configured now: `webhook.headers`), or the older form
 * POST /api/evolution/webhook/{id_channel}/{secret}[/{event}] of instances created before, so an
 * upgrade loses no channel. The secret is per instance (only its SHA-256 is stored; compared in
 * constant time) and is checked before the body is read. Always 401 for a wrong secret or unknown
 * channel, so the route reveals nothing.
 */
export async function handleEvolutionWebhook(req: Request, provider?: MessagingProvider): Promise<Response> {
  if (req.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
  const p = provider ?? (await getServices()).provider;
  // Not instanceof: Next bundles this route apart from the services (see server/simulator-http/simulator-control.ts).
  if (p.name !== "evolution") return json(404, { success: false, error: "Not Found", message: "Evolution API is not the messaging provider." });
  const evolution = p as EvolutionProvider;
  let channelId = "";
  let pathSecret = "";
  try {
    [, channelId = "", pathSecret = ""] = new URL(req.url).pathname
      .replace(/^\/api\/evolution\/webhook/, "")
      .split("/")
      .map(decodeURIComponent);
  } catch {
    return json(401, { success: false, error: "Unauthorized", message: "Unknown webhook." });
  }
  const token = req.headers.get(webhookTokenHeader) || pathSecret;
  if (!channelId || !token || !(await evolution.verifyWebhook(channelId, token))) {
    return json(401, { success: false, error: "Unauthorized", message: "Unknown webhook." });
  }
  let text: string;
  try {
    text = await readCappedText(req, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof PayloadTooLarge) return payloadTooLargeResponse(err.cap);
    throw err;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return json(400, { success: false, error: "Bad Request", message: "The body is not JSON." });
  }
  let accepted: boolean;
  try {
    accepted = await evolution.handleWebhook(channelId, token, body);
  } catch (err) {
    // 200 only once the event is recorded: Evolution sends a 5xx'd event again (never a 4xx'd one), and
    // recording is idempotent, so the resend changes nothing that was already recorded.
    console.error(
      `[evolution] a webhook of ${channelId} was not recorded; answered 503 so that the gateway sends it again:`,
      err instanceof Error ? err.message : err,
    );
    return json(503, { success: false, error: "Service Unavailable", message: "The event could not be recorded now; send it again." });
  }
  return accepted ? json(200, { success: true }) : json(401, { success: false, error: "Unauthorized", message: "Unknown webhook." });
}
