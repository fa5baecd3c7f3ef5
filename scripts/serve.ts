/**
 * The production server process, bundled by scripts/build-server.ts into .next/serve.cjs and started
 * as `node .next/serve.cjs --port 3000 [--hostname H]` from the project folder: `npm start`, the
 * browser suite, the crash test and the bench all spawn it (boot/serve-args.ts). Why it is not
 * `next start`: server/http/app-server.ts.
 */
import { parseArgs } from "node:util";
import { serverDatabase } from "../server/database";
import { env, validateEnv } from "../server/env";
import { startAppServer } from "../server/http/app-server";
import { publicLinkPrefix, servePublicLink } from "../server/launches/link/public-link";
import { handleRestRequest } from "../server/rest-api";

async function main() {
  validateEnv();
  const { values } = parseArgs({ options: { port: { type: "string" }, hostname: { type: "string" } } });
  const port = values.port ? Number(values.port) : env.port;
  // Opened (PGlite: the data-dir lock taken, waiting for an owner that is going away) before Next.js starts:
  // Next only logs an error of the instrumentation hook and serves 500s, so a refusal there left a server
  // that looked up and was not. Here it stops the process, exit 1, and a supervisor can start it again.
  // The handle is process-wide (db/client.ts): instrumentation.ts gets this one.
  await serverDatabase();
  const app = await startAppServer({
    dir: process.cwd(),
    port,
    hostname: values.hostname,
    handleExternal: handleRestRequest,
    publicLink: { prefix: publicLinkPrefix, handle: servePublicLink },
  });
  console.log(`[serve] ready on http://${values.hostname ?? "localhost"}:${port}`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      // Leases make an interrupted step safe to resume: no need to wait long for anything.
      setTimeout(() => process.exit(0), 5000).unref();
      app.close().finally(() => process.exit(0));
    });
  }
}

/** Refusals the operator acts on from the message alone (the configuration, the data directory): no stack trace. */
const plain = (err: unknown) =>
  err instanceof Error && (err.message.startsWith("Invalid environment:") || err.name === "DataDirUnusableError" || err.name === "DataDirInUseError");

main().catch((err) => {
  console.error("[serve] could not start:", plain(err) ? (err as Error).message : err);
  process.exit(1);
});
