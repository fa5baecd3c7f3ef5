/**
 * Where to go after signing in (docs/decisions.md#limits-abuse-retention, "Redirects after sign-in"): only a path on this site.
 * An absolute URL of another origin, a protocol-relative `//host`, a `/\host` (browsers read `\` as
 * `/`), or a path with a control character (`/\t/evil.example`: browsers drop tabs and newlines from
 * URLs, leaving `//evil.example`) would make the login page an open redirect.
 */
export function isSameOriginPath(value: string): boolean {
  if (!isPlainPath(value)) return false;
  // Percent-decoded too: a later decode must not turn it into one of the above.
  let decoded = value;
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      return false;
    }
    if (next === decoded) break;
    if (!isPlainPath(next)) return false;
    decoded = next;
  }
  return true;
}

function isPlainPath(value: string): boolean {
  if (!value.startsWith("/")) return false;
  if (value.startsWith("//") || value.startsWith("/\\")) return false;
  // C0 controls, DEL, C1 controls.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  return !/[\u0000-\u001f\u007f-\u009f]/.test(value);
}

export function safeCallbackUrl(raw: string | string[] | undefined, origin?: string): string {
  const value = Array.isArray(raw) ? raw[0] : raw;
  const fallback = "/overview";
  if (!value) return fallback;
  if (value.startsWith("/")) return isSameOriginPath(value) ? value : fallback;
  if (!origin) return fallback;
  try {
    const url = new URL(value);
    const path = url.pathname + url.search + url.hash;
    return url.origin === origin && isSameOriginPath(path) ? path : fallback;
  } catch {
    return fallback;
  }
}
