import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";
import { env } from "../env";
import { isPrivateAddress, publicOnlyLookup, type LookupFn } from "../net/target-address";
import { processWide } from "../process-state";

export interface SendResult {
  /** The receiver's HTTP status; 0 when there was no answer (refused, blocked address, time-out). */
  status: number;
  durationMs: number;
  error: string | null;
  /** From a `Retry-After` header (seconds or an HTTP date), in milliseconds from now. */
  retryAfterMs: number | null;
}

export interface SendOptions {
  timeoutMs?: number;
  /** Tests inject a resolver to prove that the address is checked after DNS. */
  lookup?: LookupFn;
  now?: () => number;
}

type Agents = { http: http.Agent; https: https.Agent };

/**
 * node:http(s) agents that check the connected address after DNS (request-filtering-agent): the global
 * fetch ignores agents, so deliveries go through node:http. Keep-alive, as deliveries come in bursts.
 */
function agents(allowPrivate: boolean): Agents {
  const all = processWide<Record<"strict" | "private", Agents>>("webhookAgents", () => ({
    strict: {
      http: new RequestFilteringHttpAgent({ keepAlive: true, allowPrivateIPAddress: false, allowMetaIPAddress: false }),
      https: new RequestFilteringHttpsAgent({ keepAlive: true, allowPrivateIPAddress: false, allowMetaIPAddress: false }),
    },
    private: {
      http: new RequestFilteringHttpAgent({ keepAlive: true, allowPrivateIPAddress: true, allowMetaIPAddress: true }),
      https: new RequestFilteringHttpsAgent({ keepAlive: true, allowPrivateIPAddress: true, allowMetaIPAddress: true }),
    },
  }));
  return all[allowPrivate ? "private" : "strict"];
}

/**
 * POSTs one signed body. Never throws: every outcome is a SendResult to log. Redirects are not followed
 * (a 3xx is a failure like any non-2xx); the whole exchange is bounded by the time-out (10 s).
 */
export function sendWebhook(url: string, body: string, headers: Record<string, string>, opts: SendOptions = {}): Promise<SendResult> {
  const clock = opts.now ?? Date.now;
  const started = clock();
  const timeoutMs = opts.timeoutMs ?? env.webhooks.timeoutMs;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    // Declared before `done`, which early refusals call before the time-out is armed.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (status: number, error: string | null, retryAfterMs: number | null = null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, error, retryAfterMs, durationMs: Math.max(0, Math.round(clock() - started)) });
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done(0, "invalid URL");
    }
    const isHttps = target.protocol === "https:";
    if (!isHttps && target.protocol !== "http:") return done(0, "only http and https URLs are delivered");
    const allowPrivate = env.webhooks.allowPrivate;
    const pair = agents(allowPrivate);
    // Our own ranges on top of the agent's (target-address.ts): an IP literal here, a resolved name in the lookup.
    const literal = target.hostname.replace(/^\[|\]$/g, "");
    if (!allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) return done(0, `address ${literal} is not allowed (private, loopback or reserved)`);
    const lookup = allowPrivate ? opts.lookup : publicOnlyLookup(opts.lookup);
    const req = (isHttps ? https : http).request(
      target,
      {
        method: "POST",
        agent: isHttps ? pair.https : pair.http,
        headers: { "content-type": "application/json", "user-agent": "group-campaigns-webhooks/1", "content-length": Buffer.byteLength(body), ...headers },
        ...(lookup ? { lookup } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const retryAfterMs = parseRetryAfter(res.headers["retry-after"], clock());
        // Drain (and ignore) the body so the connection can be reused; a receiver's body is never stored.
        res.resume();
        res.on("end", () => done(status, status >= 200 && status < 300 ? null : `HTTP ${status}`, retryAfterMs));
        res.on("error", (err) => done(status, err.message, retryAfterMs));
      },
    );
    timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("error", (err) => done(0, err.message || String(err)));
    // The filtering agent builds its own sockets: turn Nagle off as node:http does for its own.
    req.on("socket", (socket) => socket.setNoDelay(true));
    req.end(body);
  });
}

export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
