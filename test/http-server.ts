import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bodyCap, declaredLength, payloadTooLargeResponse } from "../server/http/body-limit";
import { keepIdleConnections, lingerBeforeClose, sendWebResponse, toWebRequest } from "../server/http/node-bridge";
import { securityHeaders } from "../server/http/security-headers";
import { handleRestRequest } from "../server/rest-api";
import { handleEvolutionWebhook } from "../server/evolution-http/evolution-webhook";
import { handleInboundHook, hooksPrefix } from "../server/hooks-http/inbound-hook";
import { handleSimulatorRequest } from "../server/simulator-http/simulator-control";
import { handleAuthorize, handleDecision, handleIntrospect, handleMetadata, handleRevoke, handleToken } from "../server/oauth/http";
import { handleNextAuth } from "./next-auth-handler";
import { applyClientHeaders } from "../server/http/client-address";
import { publicLinkPrefix, servePublicLink } from "../server/launches/link/public-link";
import { handleTrpcRequest } from "../server/trpc-http";
import { handleLaunchCsv, launchCsvPath, type LaunchCsvFile } from "../server/launches-http/launch-csv";

/** The OAuth route handlers of app/api/oauth/* and app/.well-known/*, by method and path. */
const oauthRoutes: Record<string, (req: Request) => Promise<Response>> = {
  "GET /api/oauth/authorize": handleAuthorize,
  "POST /api/oauth/authorize/decision": handleDecision,
  "POST /api/oauth/token": handleToken,
  "POST /api/oauth/revoke": handleRevoke,
  "POST /api/oauth/introspect": handleIntrospect,
  "GET /.well-known/oauth-authorization-server": handleMetadata,
};

/**
 * A real HTTP server on 127.0.0.1 in front of the same route handlers Next.js serves, so tests go
 * through sockets, headers and bodies without a build. The e2e suite covers the Next.js server itself.
 */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

const clientAddress = `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

/** `peerAddress`: the fake TCP peer of this server's clients (default: one random address per test file). */
export async function startTestServer(opts: { peerAddress?: string } = {}): Promise<TestServer> {
  const peer = opts.peerAddress ?? clientAddress;
  let base = "";
  const server: Server = createServer(async (req, res) => {
    try {
      // Each test server is its own client (a fake TCP peer), so failed-auth buckets (shared on
      // PostgreSQL) don't cross test files; under TRUST_PROXY a test picks its address with
      // X-Forwarded-For. Like app-server.ts: Content-Length past the cap is 413 before anything is read.
      const path = new URL(req.url ?? "/", base).pathname;
      // Like app-server.ts: the security headers chosen from the path as sent (securityHeaders normalises it).
      for (const [name, value] of Object.entries(securityHeaders((req.url ?? "/").split("?")[0]))) res.setHeader(name, value);
      const cap = bodyCap(path);
      const declared = declaredLength(req.headers["content-length"]);
      if (declared !== undefined && declared > cap) return await sendWebResponse(res, payloadTooLargeResponse(cap), req);
      // The launches' public link, node:http straight through as app-server.ts serves it.
      if (path.startsWith(publicLinkPrefix)) {
        applyClientHeaders(req.headers, peer);
        return await servePublicLink(req, res);
      }
      const request = await toWebRequest(req, base, peer);
      let response: Response;
      if (path.startsWith("/api/external/")) response = await handleRestRequest(request);
      else if (path.startsWith("/api/simulator/")) response = await handleSimulatorRequest(request);
      else if (path.startsWith("/api/evolution/webhook/")) response = await handleEvolutionWebhook(request);
      else if (path.startsWith(hooksPrefix)) response = await handleInboundHook(request);
      // Loaded at its first request: few files read the document (server/openapi.ts and its texts).
      else if (path === "/api/openapi.json") response = (await import("../app/api/openapi.json/route")).GET();
      else if (path.startsWith("/api/auth/")) response = await handleNextAuth(request);
      else if (path.startsWith("/api/trpc/")) response = await handleTrpcRequest(request);
      else if (launchCsvPath.test(path)) {
        const [, id, file] = launchCsvPath.exec(path) ?? [];
        response = await handleLaunchCsv(request, decodeURIComponent(id), file as LaunchCsvFile);
      } else if (oauthRoutes[`${request.method} ${path}`]) response = await oauthRoutes[`${request.method} ${path}`](request);
      else response = new Response("not found", { status: 404 });
      await sendWebResponse(res, response, req);
    } catch (err) {
      res.statusCode = 500;
      res.setHeader("connection", "close");
      res.end(String(err));
    }
  });
  keepIdleConnections(server);
  server.on("connection", (socket) => lingerBeforeClose(socket));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, close: () => new Promise((r) => server.close(() => r())) };
}
