import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { applyClientHeaders } from "./client-address";
import { apiSecurityHeaders } from "./envelope";

/** How much of a request body may wait, read from the socket but not yet by the handler. */
const bodyHighWaterMark = 64 * 1024;

/**
 * The request's body as a web stream that reads the socket only as fast as the handler consumes it
 * (nothing is read until the handler asks, so an unauthenticated 600 MB POST costs nothing), and stops
 * reading when the handler cancels it (readCappedText past its cap).
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  const detach = () => {
    finished = true;
    req.removeAllListeners("data");
    req.removeAllListeners("end");
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.pause();
        req.on("data", (chunk: Buffer) => {
          if (finished) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once("end", () => {
          if (finished) return;
          detach();
          controller.close();
        });
        req.once("error", (err) => {
          if (finished) return;
          detach();
          controller.error(err);
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        // The rest is never read; the answer carries Connection: close (sendWebResponse).
        detach();
        req.pause();
      },
    },
    { highWaterMark: bodyHighWaterMark, size: (chunk) => chunk.byteLength },
  );
}

/**
 * node:http ⇄ Fetch API, for the route handlers served outside Next.js' router (server/http/app-server.ts)
 * and by the test server. The client address is decided here (server/http/client-address.ts: the TCP
 * peer, or X-Forwarded-For under TRUST_PROXY); the test server passes a fake peer. The body is streamed,
 * never buffered here: handlers read it through server/http/body-limit.ts.
 */
export function toWebRequest(req: IncomingMessage, base: string, peerAddress = req.socket.remoteAddress): Request {
  applyClientHeaders(req.headers, peerAddress);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", base), {
    method: req.method,
    headers,
    ...(hasBody ? { body: bodyStream(req), duplex: "half" } : {}),
  } as RequestInit);
}

/**
 * Writes a Fetch API response to node:http, every Set-Cookie kept apart. When the request's body was
 * not read to the end (an early 401 or 413), the connection is closed after the answer instead of
 * reading and discarding the rest.
 */
export async function sendWebResponse(res: ServerResponse, response: Response, req?: IncomingMessage): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(apiSecurityHeaders)) res.setHeader(name, value);
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader("set-cookie", cookies);
  const unread = req !== undefined && !req.complete;
  if (unread) res.setHeader("connection", "close");
  await writeBody(res, response);
  // Discard whatever the client still sends until the connection closes (lingerBeforeClose).
  if (unread) {
    req.removeAllListeners("data"); // the body stream's, if the handler never read it
    req.resume();
  }
}

/**
 * The body as it comes (a streamed CSV export: server/launches/funnel/csv-export.ts), a chunk written only once the socket
 * took the one before, so a slow reader holds the producer back instead of the server's memory filling; a client that
 * goes away cancels the stream (no more pages are read). A body of one chunk (every JSON answer) is written whole by
 * `res.end`: one write with its Content-Length, not a chunked transfer and its terminating chunk.
 */
async function writeBody(res: ServerResponse, response: Response) {
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const closed = new Promise<"closed">((resolve) => res.once("close", () => resolve("closed")));
  const write = async (chunk: Uint8Array) =>
    res.write(chunk) || (await Promise.race([new Promise<"drain">((resolve) => res.once("drain", () => resolve("drain"))), closed])) !== "closed";
  try {
    // The first chunk is held until a second comes: if none does, it is the whole body.
    let held: Uint8Array | undefined;
    let streaming = false;
    for (;;) {
      const next = await Promise.race([reader.read(), closed]);
      if (next === "closed") {
        await reader.cancel().catch(() => {});
        return;
      }
      if (next.done) break;
      if (!streaming && !held) {
        held = next.value;
        continue;
      }
      streaming = true;
      const chunks = held ? [held, next.value] : [next.value];
      held = undefined;
      for (const chunk of chunks) {
        if (!(await write(chunk))) {
          await reader.cancel().catch(() => {});
          return;
        }
      }
    }
    res.end(held);
  } catch (err) {
    // The producer failed midway (a database error): the answer cannot change any more, so the connection is cut
    // and the client sees a truncated transfer, never a file that looks complete.
    console.error("[http] response stream failed", err);
    res.destroy(err as Error);
  }
}

/**
 * "Lingering close" (as nginx does) for a connection the server closes after answering, e.g. a 401 or
 * 413 before the body was read: Node destroys such a socket as soon as the answer is written, and a
 * client still sending its body then gets a reset that can discard the answer before it reads it.
 * Here the socket is half-closed after the answer and what still arrives is discarded for at most
 * `ms`, or until the client closes. Installed on every connection of app-server.ts and the test server.
 */
export function lingerBeforeClose(socket: Socket, ms = 2000): void {
  socket.destroySoon = function (this: Socket) {
    if (this.writable) this.end();
    if (this.destroyed) return;
    const timer = setTimeout(() => this.destroy(), ms);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
  };
}

/**
 * Idle keep-alive connections are kept 65 s (Node's default is 5 s). The side that closes an idle connection must be
 * the client: a proxy in front (their idle timeout is usually 60 s) that reuses a connection the server has just
 * closed answers its client 502, and a client racing the server's close reads ECONNRESET. Headers must still
 * arrive within 66 s (Node wants that above the keep-alive). Installed on app-server.ts and the test server.
 */
export function keepIdleConnections(server: Server): void {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
}
