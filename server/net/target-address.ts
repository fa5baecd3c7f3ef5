import { lookup as dnsLookup } from "node:dns";
import { BlockList, isIP } from "node:net";
import { env } from "../env";

export type LookupFn = typeof dnsLookup;

/** Private, loopback, link-local, shared, documentation, multicast and reserved ranges (IANA special-purpose registries). */
const nonPublic = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  nonPublic.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  // IPv4-compatible addresses (deprecated, RFC 4291 §2.5.5.1) with `::` and `::1`: `[::7f00:1]` is `::127.0.0.1`.
  ["::", 96],
  // IPv4-translated (RFC 2765): `::ffff:0:a.b.c.d`.
  ["::ffff:0:0:0", 96],
  // NAT64 (RFC 6052, 8215): a gateway turns these into the IPv4 address they carry.
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["3fff::", 20],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  nonPublic.addSubnet(net, prefix, "ipv6");

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`), if it is one. */
function mappedIpv4(ip: string): string | undefined {
  const m = /^(?:0{0,4}:){0,5}:?ffff:(.+)$/i.exec(ip);
  if (!m) return undefined;
  if (isIP(m[1]) === 4) return m[1];
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(m[1]);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

/** True for anything but a public unicast address (and for anything that is not an IP address at all). */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 0) return true;
  if (family === 6) {
    const v4 = mappedIpv4(bare);
    if (v4) return nonPublic.check(v4, "ipv4");
    return nonPublic.check(bare, "ipv6");
  }
  return nonPublic.check(bare, "ipv4");
}

/**
 * Host names that name the operator's own network rather than the internet: `localhost` and
 * `*.localhost` (RFC 6761), `*.local` (mDNS), `*.internal` (ICANN's private-use TLD), `*.home.arpa`
 * (RFC 8375), the common `*.lan` / `*.localdomain`, and a single label (`gateway`, `postgres`: a
 * container or search-domain name).
 */
export function isInternalHostName(host: string): boolean {
  const h = bareHost(host);
  if (!h.includes(".")) return true;
  return h === "localhost" || /\.(localhost|local|internal|home\.arpa|lan|localdomain)$/.test(h);
}

/**
 * A URL's host as the resolver will use it: no brackets, lower case, and no trailing dots. `localhost.`
 * is the fully qualified `localhost`, so the name rules must see it without its dot; URL parsing has
 * already turned every IPv4 spelling (`0x7f.1`, `2130706433`, `0177.0.0.1`, `127.0.0.1.`, full-width
 * digits) into dotted decimal and every IPv6 one into its short form.
 */
function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.+$/, "");
}

const refusedTarget = "must not point to a private, loopback, link-local or reserved address";

/**
 * Why a URL that someone else (the messaging gateway) will fetch is refused, from its host alone: an IP
 * literal outside public unicast space, or an internal name. URL parsing has already normalised the
 * IPv4 spellings (`0x7f.1`, `2130706433`, `0177.0.0.1` → 127.0.0.1) and IPv6 (`[::ffff:127.0.0.1]`
 * → `[::ffff:7f00:1]`). No DNS lookup: the fetcher resolves the name itself, later.
 */
export function mediaHostProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  return hostProblem(bareHost(url.hostname));
}

/** Why a host (bareHost) is refused without resolving it: a non-public IP literal, or an internal name. */
function hostProblem(host: string): string | null {
  if (isIP(host) !== 0) return isPrivateAddress(host) ? refusedTarget : null;
  return isInternalHostName(host) ? `${refusedTarget} (internal host name ${host})` : null;
}

/**
 * Why a webhook URL is refused, or null when it is acceptable. Checked when the URL is saved; the same
 * rule is enforced again at connect time, after DNS (send-webhook.ts), so DNS rebinding gains nothing.
 */
export async function webhookUrlProblem(raw: string, opts: { lookup?: LookupFn; allowPrivate?: boolean } = {}): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute http(s) URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (opts.allowPrivate ?? env.webhooks.allowPrivate) return null;
  // The media rule first (IP literals in any spelling, internal names such as `localhost.`), then DNS.
  const host = bareHost(url.hostname);
  const problem = hostProblem(host);
  if (problem || isIP(host) !== 0) return problem;
  const addresses = await resolveAll(host, opts.lookup ?? dnsLookup);
  // A name that does not resolve now is accepted: the connect-time check still guards every delivery.
  return addresses.some(isPrivateAddress) ? refusedTarget : null;
}

/**
 * A resolver that fails for a name resolving to any non-public address (isPrivateAddress), for connect-time
 * checks: request-filtering-agent checks the connected address too, but by its own ranges, which miss some of
 * ours (`::7f00:1`, an IPv4-compatible loopback; `64:ff9b:1::/48`).
 */
export function publicOnlyLookup(base: LookupFn = dnsLookup): LookupFn {
  return ((host: string, options: unknown, cb?: unknown) => {
    const callback = (typeof options === "function" ? options : cb) as (err: Error | null, address?: unknown, family?: number) => void;
    const opts = typeof options === "function" ? {} : options;
    (base as unknown as (h: string, o: unknown, c: typeof callback) => void)(host, opts, (err, address, family) => {
      if (err) return callback(err);
      const all = Array.isArray(address) ? (address as { address: string }[]).map((a) => a.address) : [String(address)];
      const refused = all.find(isPrivateAddress);
      if (refused) return callback(new Error(`DNS lookup ${host} → ${refused} is not allowed: ${refusedTarget}.`));
      callback(null, address, family);
    });
  }) as unknown as LookupFn;
}

function resolveAll(host: string, lookup: LookupFn): Promise<string[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), 2000);
    lookup(host, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? [] : (addresses as unknown as { address: string }[]).map((a) => a.address));
    });
  });
}
