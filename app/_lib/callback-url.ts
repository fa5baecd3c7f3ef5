/**
 * Where to go after signing in: only a path on this site (an absolute URL of another origin, or
 * a protocol-relative `//host`, would make the login page an open redirect).
 */
export function safeCallbackUrl(raw: string | string[] | undefined, origin?: string): string {
  const value = Array.isArray(raw) ? raw[0] : raw;
  const fallback = "/channels";
  if (!value) return fallback;
  if (value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\")) return value;
  if (!origin) return fallback;
  try {
    const url = new URL(value);
    return url.origin === origin ? url.pathname + url.search + url.hash : fallback;
  } catch {
    return fallback;
  }
}
