/**
 * The bench's webhook receiver (a child process): answers 204 and reports each arrival (webhook-id, epoch ms).
 * Listens on the port given as its first argument (the proof's soak restarts it on the same one), else any.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    process.send?.({ id: String(req.headers["webhook-id"]), at: Date.now() });
    res.writeHead(204).end();
  });
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on("disconnect", () => process.exit(0));
