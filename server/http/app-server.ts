import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import next from "next";
import { bodyCap, declaredLength, payloadTooLargeResponse } from "./body-limit";
import { applyClientHeaders } from "./client-address";
import { keepIdleConnections, lingerBeforeClose, sendWebResponse, toWebRequest } from "./node-bridge";
import { securityHeaders } from "./security-headers";

/** The published REST API: served straight from the facade. HEAD and OPTIONS keep Next.js' handling. */
const externalPrefix = "/api/external/";
const directMethods = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

export interface AppServer {
  server: Server;
  close(): Promise<void>;
}

/**
 * The production server: Next.js (dashboard, consent page, OAuth, tRPC, Inngest, every route of app/)
 * behind one node:http server that hands `/api/external/*` to the REST facade directly. The facade is
 * the same handler as app/api/external/[...path]/route.ts (`handleExternal`, server/rest-api.ts) (which `next dev` still serves); going
 * around Next.js' router saves it about 3 ms of CPU per call on a 2-vCPU machine (docs/history/benchmarks.md).
 *
 * The launches' public link `/g/{slug}` is answered here too, never by Next.js (its p99 target is 20 ms).
 *
 * Every request first gets, here: its client address (server/http/client-address.ts: TCP peer or
 * TRUST_PROXY), the security headers (server/http/security-headers.ts), and a 413 when its declared
 * Content-Length is past its path's cap (server/http/body-limit.ts), before any of the body is read.
 */
export async function startAppServer(opts: {
  dir: string;
  port: number;
  hostname?: string;
  /** The REST facade with its dependencies (server/rest-api.ts `handleRestRequest`). */
  handleExternal: (req: Request) => Promise<Response>;
  /**
   * The launches' public join link `GET /g/{slug}` (server/launches/link/public-link.ts): answered here, before
   * Next.js, with node:http directly (no Fetch API conversion), after the client address is decided.
   */
  publicLink?: { prefix: string; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> };
}): Promise<AppServer> {
  const app = next({ dev: false, dir: opts.dir, hostname: opts.hostname ?? "localhost", port: opts.port });
  await app.prepare();
  const handleNext = app.getRequestHandler();
  const base = `http://${opts.hostname ?? "localhost"}:${opts.port}`;
  const server = createServer((req, res) => {
    const pathname = pathOf(req.url);
    for (const [name, value] of Object.entries(securityHeaders(pathname))) res.setHeader(name, value);
    const declared = declaredLength(req.headers["content-length"]);
    const cap = bodyCap(pathname);
    if (declared !== undefined && declared > cap) {
      void sendWebResponse(res, payloadTooLargeResponse(cap), req).catch(() => res.destroy());
      return;
    }
    if (directMethods.has(req.method ?? "") && pathname.startsWith(externalPrefix)) {
      void serveExternal(req, res, base, opts.handleExternal);
    } else if (opts.publicLink && pathname.startsWith(opts.publicLink.prefix)) {
      applyClientHeaders(req.headers, req.socket.remoteAddress);
      opts.publicLink.handle(req, res).catch(() => res.destroy());
    } else {
      applyClientHeaders(req.headers, req.socket.remoteAddress);
      void handleNext(req, res);
    }
  });
  keepIdleConnections(server);
  server.on("connection", (socket) => lingerBeforeClose(socket));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.hostname, () => resolve());
  });
  return {
    server,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
    },
  };
}

function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const q = raw.indexOf("?");
  return q === -1 ? raw : raw.slice(0, q);
}

async function serveExternal(req: IncomingMessage, res: ServerResponse, base: string, handleExternal: (req: Request) => Promise<Response>) {
  try {
    // toWebRequest sets the client address; the body is streamed, read by the facade after authentication.
    await sendWebResponse(res, await handleExternal(await toWebRequest(req, base)), req);
  } catch (err) {
    // The facade answers every error itself; this is a request that could not even be read.
    console.error("[app-server] request failed", err);
    if (!res.headersSent) {
      res.statusCode = 400;
      res.setHeader("connection", "close");
    }
    res.end();
  }
}
