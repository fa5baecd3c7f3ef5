const loopbackHosts = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * A redirect URI an app may register (RFC 9700 §2.1, RFC 8252 §7.3): absolute, no fragment, https —
 * or http only on a loopback host. Returns what is wrong, or undefined.
 */
export function redirectUriProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.hash || raw.includes("#")) return "must not contain a fragment (#)";
  if (url.username || url.password) return "must not contain credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname)) return undefined;
  return "must use https (http only for 127.0.0.1, [::1] or localhost)";
}
