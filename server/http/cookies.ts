/** A cookie value percent-decoded; one that is not valid percent-encoding is kept as sent (as the `cookie` package does). */
const cookieValue = (raw: string) => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

/** The `Cookie` header as name → value. */
export function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq).trim()] = cookieValue(part.slice(eq + 1).trim());
  }
  return out;
}
