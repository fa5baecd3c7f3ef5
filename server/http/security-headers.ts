import { env } from "../env";
import { apiSecurityHeaders } from "./envelope";

/**
 * The security headers of every answer of the production server (docs/decisions.md#limits-abuse-retention, "Security headers"),
 * set by server/http/app-server.ts before Next.js or the REST facade answers:
 *  - every answer: X-Content-Type-Options: nosniff, Referrer-Policy: strict-origin-when-cross-origin;
 *  - every page (whatever is not under /api/, however the path is spelt: isApiPath): a Content-Security-Policy that forbids framing, plugins
 *    and a foreign <base> (no script-src: Next.js' inline bootstrap scripts and the /docs page's Scalar
 *    bundle keep working), and X-Frame-Options: DENY for browsers without frame-ancestors;
 *  - Strict-Transport-Security when APP_URL is https.
 * The consent page used to be the only one with anti-framing headers (next.config.mjs); it gets
 * these like every page.
 */
export const pageContentSecurityPolicy = "frame-ancestors 'none'; object-src 'none'; base-uri 'self'";

/**
 * Whether a request path (as the client sent it, not normalised) names the API: it must do so however it
 * is read. Next.js routes the normalised path — dot segments resolved, `%2e` as `.`, `\` as `/` — so
 * `/api/%2e%2e/oauth/authorize` and `/api/../login` are pages (the consent page, the login page) and get
 * the page headers; also with repeated slashes collapsed (`/api//..//login`) and percent-decoded first
 * (`/api/%2e%2e%2flogin`), in case a layer does either.
 * An API answer given the page headers loses nothing; a page without them could be framed.
 */
export function isApiPath(rawPath: string): boolean {
  const resolve = (p: string) => {
    try {
      return new URL(`http://h${p.startsWith("/") ? "" : "/"}${p}`).pathname;
    } catch {
      return "";
    }
  };
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    decoded = rawPath;
  }
  const collapse = (p: string) => p.replace(/[/\\]+/g, "/");
  return [rawPath, resolve(rawPath), resolve(decoded), resolve(collapse(rawPath)), resolve(collapse(decoded))].every((p) => p.startsWith("/api/"));
}

/** `rawPath`: the request's path as sent (server/http/app-server.ts passes it before anything normalises it). */
export function securityHeaders(rawPath: string, appUrl = env.appUrl): Record<string, string> {
  const headers: Record<string, string> = { ...apiSecurityHeaders };
  if (!isApiPath(rawPath)) {
    headers["content-security-policy"] = pageContentSecurityPolicy;
    headers["x-frame-options"] = "DENY";
  }
  if (appUrl.startsWith("https://")) headers["strict-transport-security"] = "max-age=31536000; includeSubDomains";
  return headers;
}
