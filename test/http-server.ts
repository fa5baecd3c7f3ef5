import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { GET as openapi } from "../app/api/openapi.json/route";
import { handleExternalRequest } from "../server/http/rest";
import { handleEvolutionWebhook } from "../server/messaging/evolution-webhook";
import { handleSimulatorRequest } from "../server/messaging/simulator-control";

/**
 * A real HTTP server on 127.0.0.1 in front of the same route handlers Next.js serves, so tests go
 * through sockets, headers and bodies without a build. The e2e suite covers the Next.js server itself.
 */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

const clientAddress = `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

async function toRequest(req: IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  // Like a proxy in front of the app: keep a forwarded address when the test sets one. Otherwise each
  // test server is its own client, so failed-auth buckets (shared on PostgreSQL) don't cross test files.
  if (!headers.has("x-forwarded-for")) headers.set("x-forwarded-for", clientAddress);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", base), { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
}

async function send(res: ServerResponse, response: Response) {
  res.statusCode = response.status;
  response.headers.forEach((v, k) => res.setHeader(k, v));
  res.end(Buffer.from(await response.arrayBuffer()));
}

export async function startTestServer(): Promise<TestServer> {
  let base = "";
  const server: Server = createServer(async (req, res) => {
    try {
      const request = await toRequest(req, base);
      const path = new URL(request.url).pathname;
      let response: Response;
      if (path.startsWith("/api/external/")) response = await handleExternalRequest(request);
      else if (path.startsWith("/api/simulator/")) response = await handleSimulatorRequest(request);
      else if (path.startsWith("/api/evolution/webhook/")) response = await handleEvolutionWebhook(request);
      else if (path === "/api/openapi.json") response = openapi();
      else response = new Response("not found", { status: 404 });
      await send(res, response);
    } catch (err) {
      res.statusCode = 500;
      res.end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, close: () => new Promise((r) => server.close(() => r())) };
}
