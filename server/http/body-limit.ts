import { errorResult, toResponse } from "./envelope";

/**
 * Request body caps (docs/decisions.md#limits-abuse-retention, "Request bodies"), by path, and the one way every handler reads a
 * body: `readCappedText` refuses a declared Content-Length past the cap without reading anything, and
 * cuts a streamed (chunked) body off the moment it passes the cap. app-server.ts applies the same table
 * to Content-Length before a request reaches Next.js or the REST facade.
 */
export const KiB = 1024;
export const MiB = 1024 * KiB;

/** The cap for a request path, in bytes. */
export function bodyCap(pathname: string): number {
  if (pathname.startsWith("/api/external/")) {
    // Segments carry up to SEGMENT_GROUP_LIMIT group ids.
    if (/^\/api\/external\/(create-segment|edit-segment)(\/|$)/.test(pathname)) return 4 * MiB;
    // 10,000 leads with a name, an email and a source each (docs/launches.md#leads).
    if (/^\/api\/external\/launch-leads(\/|$)/.test(pathname)) return 8 * MiB;
    return 1 * MiB;
  }
  if (pathname.startsWith("/api/oauth/")) return 64 * KiB;
  if (pathname.startsWith("/api/evolution/webhook/")) return 4 * MiB;
  // A marketplace's purchase notice is a few KiB (docs/integrations.md#inbound-webhooks-buyers).
  if (pathname.startsWith("/api/hooks/")) return 256 * KiB;
  // Inngest's executor posts a run's state (signed; at most 32 MB by Inngest's limits), plus its envelope.
  if (pathname === "/api/inngest" || pathname.startsWith("/api/inngest/")) return 36 * MiB;
  // tRPC, next-auth (/api/auth/*), the simulator's control endpoints, pages and everything else.
  return 1 * MiB;
}

export class PayloadTooLarge extends Error {
  constructor(readonly cap: number) {
    super(`The request body is larger than ${describeBytes(cap)}.`);
    this.name = "PayloadTooLarge";
  }
}

export const describeBytes = (n: number) => (n % MiB === 0 ? `${n / MiB} MiB` : n % KiB === 0 ? `${n / KiB} KiB` : `${n} bytes`);

/** The declared Content-Length, or undefined when absent or not a plain number. */
export function declaredLength(value: string | null | undefined): number | undefined {
  if (!value || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/** 413 in the spec's envelope; `Connection: close`, since the rest of the body is never read. */
export function payloadTooLargeResponse(cap: number): Response {
  return toResponse(errorResult(413, new PayloadTooLarge(cap).message, "payload_too_large", { max: cap }, { connection: "close" }));
}

/** The body as bytes, at most `cap` of them; throws PayloadTooLarge otherwise (without reading past the cap). */
export async function readCappedBytes(req: Request, cap: number): Promise<Uint8Array> {
  const declared = declaredLength(req.headers.get("content-length"));
  if (declared !== undefined && declared > cap) {
    await req.body?.cancel().catch(() => {});
    throw new PayloadTooLarge(cap);
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLarge(cap);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/** The body as UTF-8 text, at most `cap` bytes (default: the cap of the request's path). */
export async function readCappedText(req: Request, cap = bodyCap(new URL(req.url).pathname)): Promise<string> {
  return new TextDecoder().decode(await readCappedBytes(req, cap));
}

/**
 * A copy of `req` whose body has been read within its path's cap, for handlers that read the body
 * themselves (tRPC's fetch adapter, next-auth); a 413 response when it is too large.
 */
export async function cappedRequest(req: Request, cap = bodyCap(new URL(req.url).pathname)): Promise<Request | Response> {
  if (req.method === "GET" || req.method === "HEAD") return req;
  try {
    const body = await readCappedBytes(req, cap);
    const headers = new Headers(req.headers);
    headers.delete("transfer-encoding");
    headers.set("content-length", String(body.byteLength));
    return new Request(req.url, { method: req.method, headers, body: body as BodyInit, signal: req.signal });
  } catch (err) {
    if (err instanceof PayloadTooLarge) return payloadTooLargeResponse(err.cap);
    throw err;
  }
}
