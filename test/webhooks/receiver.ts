import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// No vitest and no test server here: the browser suite (e2e/webhooks.spec.ts) imports this file too.

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A loopback webhook receiver whose answer tests can change (status, delay, headers) while it runs. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Answer for the next requests: a status (default 200), optional headers, optional delay, optional body (default `ok`). */
  respond: (r: { status?: number; headers?: Record<string, string>; delayMs?: number; body?: string }) => void;
  /** Stops listening (connections refused) until `start` again, on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** `port`: a fixed one (the e2e runner gives the server its Meta receiver's address before the spec starts it); default any free one. */
export async function startReceiver({ port: fixedPort = 0 }: { port?: number } = {}): Promise<Receiver> {
  const received: Received[] = [];
  let answer: { status?: number; headers?: Record<string, string>; delayMs?: number; body?: string } = {};
  let port = fixedPort;
  let server: Server;
  const listen = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        received.push({ path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
        const reply = () => {
          res.writeHead(answer.status ?? 200, answer.headers ?? {});
          res.end(answer.body ?? "ok");
        };
        if (answer.delayMs) setTimeout(reply, answer.delayMs);
        else reply();
      });
    });
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  };
  await listen();
  const stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    respond: (r) => (answer = r),
    stop,
    start: listen,
    close: stop,
  };
}

/** Headers as `standardwebhooks`' verify takes them. */
export const webhookHeadersOf = (h: IncomingHttpHeaders) => ({
  "webhook-id": String(h["webhook-id"]),
  "webhook-timestamp": String(h["webhook-timestamp"]),
  "webhook-signature": String(h["webhook-signature"]),
});
