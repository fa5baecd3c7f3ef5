import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * node:http ⇄ Fetch API, for the route handlers served outside Next.js' router (server/http/app-server.ts)
 * and by the test server. Headers as Next.js hands them to a route handler: `x-forwarded-for` is the
 * peer's address unless a proxy in front already set it.
 */
export async function toWebRequest(req: IncomingMessage, base: string, peerAddress = req.socket.remoteAddress): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  if (!headers.has("x-forwarded-for") && peerAddress) headers.set("x-forwarded-for", peerAddress);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  let body: Buffer<ArrayBuffer> | undefined;
  if (hasBody) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    body = Buffer.concat(chunks);
  }
  return new Request(new URL(req.url ?? "/", base), { method: req.method, headers, body });
}

/** Writes a Fetch API response to node:http, every Set-Cookie kept apart. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader("set-cookie", cookies);
  res.end(Buffer.from(await response.arrayBuffer()));
}
