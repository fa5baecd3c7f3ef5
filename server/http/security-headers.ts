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
  // The path as sent is one of the readings: a path that does not start with /api/ is a page without parsing it
  // (every page and the join link /g/{slug} on each request: server/http/app-server.ts).
  if (!rawPath.startsWith("/api/")) return false;
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

/** The four sets securityHeaders answers with (page or API, https APP_URL or not), built once: shared, never mutated. */
const headerSets: Readonly<Record<string, string>>[] = [];

/**
 * `rawPath`: the request's path as sent (server/http/app-server.ts passes it before anything normalises it).
 * The answer is shared between requests: read it, copy it to change it.
 */
export function securityHeaders(rawPath: string, appUrl = env.appUrl): Readonly<Record<string, string>> {
  const page = !isApiPath(rawPath);
  const https = appUrl.startsWith("https://");
  const key = (page ? 2 : 0) + (https ? 1 : 0);
  let headers = headerSets[key];
  if (!headers) {
    const built: Record<string, string> = { ...apiSecurityHeaders };
    if (page) {
      built["content-security-policy"] = pageContentSecurityPolicy;
      built["x-frame-options"] = "DENY";
    }
    if (https) built["strict-transport-security"] = "max-age=31536000; includeSubDomains";
    headers = Object.freeze(built);
    headerSets[key] = headers;
  }
  return headers;
}
