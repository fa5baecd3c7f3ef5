import { request as httpRequest } from "node:http";

/** A large request body over a real socket, for the body-cap tests (test/api/edge.test.ts, e2e/edge.spec.ts). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Bytes of the body written when the answer arrived. */
  sentWhenAnswered: number;
  ms: number;
}

/**
 * Sends `total` bytes of `chunk`-sized pieces (chunked when `contentLength` is false), honouring
 * backpressure, and stops writing as soon as the answer arrives.
 */
export function sendLarge(
  url: string,
  opts: { path: string; total: number; headers?: Record<string, string>; contentLength?: boolean; method?: string },
): Promise<RawAnswer> {
  const { path, total, headers = {}, contentLength = true, method = "POST" } = opts;
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const req = httpRequest(target, {
      method,
      headers: { "content-type": "application/json", ...headers, ...(contentLength ? { "content-length": String(total) } : {}) },
    });
    let sent = 0;
    let answered = false;
    const piece = Buffer.alloc(64 * 1024, 0x20); // spaces: still "JSON" up to the end
    req.on("response", (res) => {
      answered = true;
      const sentWhenAnswered = sent;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sentWhenAnswered, ms: Date.now() - t0 });
        req.destroy();
      });
      res.on("error", reject);
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const pump = () => {
      while (!answered && sent < total) {
        const n = Math.min(piece.length, total - sent);
        sent += n;
        if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered && sent >= total) req.end();
    };
    pump();
  });
}
