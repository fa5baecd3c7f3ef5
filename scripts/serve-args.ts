import { serverBundle } from "./build-server";

/**
 * How to start the production server (scripts/serve.ts, bundled by the build) after ensureBuild:
 * `spawn(process.execPath, serverArgs(…))` from the project folder.
 */
export function serverArgs(opts: { port: number; hostname?: string; nodeArgs?: string[] }): string[] {
  return [...(opts.nodeArgs ?? []), serverBundle, "--port", String(opts.port), ...(opts.hostname ? ["--hostname", opts.hostname] : [])];
}
