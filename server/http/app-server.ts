import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import next from "next";
import { sendWebResponse, toWebRequest } from "./node-bridge";
import { handleExternalRequest } from "./rest";

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
 * the same handler as app/api/external/[...path]/route.ts (which `next dev` still serves); going
 * around Next.js' router saves it about 3 ms of CPU per call on a 2-vCPU machine (README, Benchmarks).
 */
export async function startAppServer(opts: { dir: string; port: number; hostname?: string }): Promise<AppServer> {
  const app = next({ dev: false, dir: opts.dir, hostname: opts.hostname ?? "localhost", port: opts.port });
  await app.prepare();
  const handleNext = app.getRequestHandler();
  const base = `http://${opts.hostname ?? "localhost"}:${opts.port}`;
  const server = createServer((req, res) => {
    if (directMethods.has(req.method ?? "") && req.url?.startsWith(externalPrefix)) void serveExternal(req, res, base);
    else void handleNext(req, res);
  });
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

async function serveExternal(req: IncomingMessage, res: ServerResponse, base: string) {
  try {
    await sendWebResponse(res, await handleExternalRequest(await toWebRequest(req, base)));
  } catch (err) {
    // The facade answers every error itself; this is a request that could not even be read.
    console.error("[app-server] request failed", err);
    if (!res.headersSent) res.statusCode = 400;
    res.end();
  }
}
