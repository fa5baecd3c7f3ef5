import { env } from "../env";
import { requestOrigin } from "./client-address";

/**
 * Same origin (docs/decisions.md#limits-abuse-retention, "Consent decision" and "Dashboard mutations"):
 * the `Origin` header is APP_URL's origin or the origin the browser used (scheme + Host; X-Forwarded-Host/
 * -Proto only under TRUST_PROXY, server/http/client-address.ts); without `Origin`, `Sec-Fetch-Site:
 * same-origin`. Not `req.url`: Next.js rewrites its host to its own hostname (a dashboard opened at
 * 127.0.0.1 saw `localhost`). A request with neither header is not same-origin.
 */
export function sameOrigin(req: Request, appUrl = env.appUrl): boolean {
  const origin = req.headers.get("origin");
  if (origin) return origin === new URL(appUrl).origin || origin === requestOrigin(req.headers);
  return req.headers.get("sec-fetch-site") === "same-origin";
}

/** `Content-Type: application/json`, parameters (charset) allowed. */
export function isJson(headers: Headers): boolean {
  return (headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Why a request to a cookie-authenticated endpoint that changes something (a tRPC POST) is refused, or
 * null. A browser attaches the session cookie to a cross-site request (SameSite=Lax still lets a sibling
 * subdomain through), and a form can post `multipart/form-data` or `text/plain` without a CORS preflight;
 * demanding same origin and `application/json` leaves another site no way in. Safe methods change nothing.
 */
export function crossSiteRefusal(req: Request): string | null {
  if (safeMethods.has(req.method)) return null;
  if (!sameOrigin(req)) return "Cross-site request refused: the Origin (or Sec-Fetch-Site) is not this site.";
  if (!isJson(req.headers)) return "Only application/json requests are accepted here.";
  return null;
}
