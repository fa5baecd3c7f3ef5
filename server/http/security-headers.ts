import { env } from "../env";
import { apiSecurityHeaders } from "./envelope";

/**
 * The security headers of every answer of the production server (docs/decisions.md#limits-abuse-retention, "Security headers"),
 * set by server/http/app-server.ts before Next.js or the REST facade answers:
 *  - every answer: X-Content-Type-Options: nosniff, Referrer-Policy: strict-origin-when-cross-origin;
 *  - every page (whatever is not under /api/): a Content-Security-Policy that forbids framing, plugins
 *    and a foreign <base> (no script-src: Next.js' inline bootstrap scripts and the /docs page's Scalar
 *    bundle keep working), and X-Frame-Options: DENY for browsers without frame-ancestors;
 *  - Strict-Transport-Security when APP_URL is https.
 * The consent page used to be the only one with anti-framing headers (next.config.mjs); it gets
 * these like every page.
 */
export const pageContentSecurityPolicy = "frame-ancestors 'none'; object-src 'none'; base-uri 'self'";

export function securityHeaders(pathname: string, appUrl = env.appUrl): Record<string, string> {
  const headers: Record<string, string> = { ...apiSecurityHeaders };
  if (!pathname.startsWith("/api/")) {
    headers["content-security-policy"] = pageContentSecurityPolicy;
    headers["x-frame-options"] = "DENY";
  }
  if (appUrl.startsWith("https://")) headers["strict-transport-security"] = "max-age=31536000; includeSubDomains";
  return headers;
}
