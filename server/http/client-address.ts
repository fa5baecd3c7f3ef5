import type { IncomingHttpHeaders } from "node:http";
import { env } from "../env";
import { processSlot } from "../process-state";

/**
 * The client address and the origin the browser used (docs/decisions.md#limits-abuse-retention, "Client address"), decided in
 * one place: where a node:http request enters the service (server/http/app-server.ts, for Next.js and
 * the REST facade alike, and node-bridge's toWebRequest, which the test server uses too).
 *
 * - The client is the TCP peer. With TRUST_PROXY=N it is the N-th address from the right of
 *   X-Forwarded-For (each trusted proxy appends the address it saw), or the left-most one when the
 *   header holds fewer.
 * - The result goes into the internal header `x-gcs-client-address`; a copy sent by the client is
 *   always replaced. `clientIp()` (below) reads only that header.
 * - Without TRUST_PROXY the client's X-Forwarded-For/-Host/-Proto/-Port are removed (Next.js then
 *   fills them in from the connection); with it, X-Forwarded-Host and -Proto are reduced to the value
 *   chosen by the same rule, so handlers read one trustworthy value.
 */
export const clientAddressHeader = "x-gcs-client-address";

const clientAddressSet = processSlot<boolean>("clientAddressSet");

/** True once a front server (app-server.ts, the test server) sets the internal header on every request. */
export const clientAddressIsSet = () => clientAddressSet.get() === true;

/** "::ffff:127.0.0.1" → "127.0.0.1"; an empty or absent address → "unknown". */
export function normalizeAddress(address: string | undefined): string {
  const a = address?.trim();
  if (!a) return "unknown";
  const mapped = a.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i);
  return mapped ? mapped[1] : a;
}

const list = (value: string | string[] | undefined): string[] =>
  (Array.isArray(value) ? value.join(",") : (value ?? ""))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** The N-th value from the right (N ≥ 1), or the left-most when there are fewer. */
const fromRight = (values: string[], n: number) => values[Math.max(0, values.length - n)];

/** The client's address from the peer and (under TRUST_PROXY) X-Forwarded-For. */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trustProxy = env.trustProxy): string {
  if (trustProxy <= 0) return normalizeAddress(peer);
  const chain = list(forwardedFor);
  return normalizeAddress(chain.length ? fromRight(chain, trustProxy) : peer);
}

/**
 * Rewrites a node:http request's headers in place as described above. `peer` defaults to the socket's
 * address (the test server passes a fake one per server).
 */
export function applyClientHeaders(headers: IncomingHttpHeaders, peer: string | undefined, trustProxy = env.trustProxy): void {
  clientAddressSet.set(true);
  const address = resolveClientAddress(peer, headers["x-forwarded-for"], trustProxy);
  if (trustProxy <= 0) {
    delete headers["x-forwarded-for"];
    delete headers["x-forwarded-host"];
    delete headers["x-forwarded-proto"];
    delete headers["x-forwarded-port"];
  } else {
    for (const name of ["x-forwarded-host", "x-forwarded-proto"] as const) {
      const values = list(headers[name]);
      if (values.length) headers[name] = fromRight(values, trustProxy);
      else delete headers[name];
    }
  }
  headers[clientAddressHeader] = address;
}

/**
 * The origin the browser used: scheme + Host, or X-Forwarded-Proto/-Host where the front server
 * kept them (only under TRUST_PROXY; Next.js fills them in from the connection otherwise).
 */
export function requestOrigin(headers: Headers): string | undefined {
  const host = headers.get("x-forwarded-host")?.split(",")[0]?.trim() || headers.get("host")?.trim();
  if (!host) return undefined;
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https" ? "https" : "http";
  try {
    return new URL(`${proto}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * The client's address (docs/decisions.md#limits-abuse-retention, "Client address"), as the front server decided it from the TCP
 * peer and TRUST_PROXY (server/http/client-address.ts): the only place every per-IP limit reads it.
 * Without a front server (`next dev`, a bare `next start`), the internal header is not believed (a
 * client could send it) and the address is the right-most X-Forwarded-For entry, which Next.js sets
 * to the TCP peer when the client sent none; there a client can choose its own address.
 */
export function clientIp(headers: Headers): string {
  if (clientAddressIsSet()) return headers.get(clientAddressHeader) || "unknown";
  const forwarded = headers.get("x-forwarded-for")?.split(",");
  return normalizeAddress(forwarded?.[forwarded.length - 1]);
}

/** The eight 16-bit groups of an IPv6 address (a zone id dropped, an embedded IPv4 tail folded), or null. */
function ipv6Groups(address: string): number[] | null {
  let a = address.replace(/%.*$/, "").toLowerCase();
  const v4 = a.match(/^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) {
    const [b0, b1, b2, b3] = v4.slice(2).map(Number);
    a = `${v4[1]}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const halves = a.split("::");
  if (halves.length > 2) return null;
  const part = (s: string) => (s ? s.split(":") : []);
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}

/**
 * The key of every per-address limit (docs/security.md, "Per-address keys"): an IPv4 client by its
 * address, an IPv6 client by its /64 (one host owns a whole /64, so each of its addresses is the same
 * client). "::ffff:1.2.3.4" is the IPv4 client 1.2.3.4; anything unparseable is keyed as it is.
 */
export function addressKey(address: string): string {
  const a = normalizeAddress(address);
  if (!a.includes(":")) return a;
  const groups = ipv6Groups(a);
  if (!groups) return a;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}
