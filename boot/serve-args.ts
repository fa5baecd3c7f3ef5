import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How the production server process is started, shared by scripts/ (start, build-server) and e2e/ (the
 * e2e runner, the crash test, the bench): neither imports the other's files.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The esbuild bundle of scripts/serve.ts (scripts/build-server.ts writes it). */
export const serverBundle = path.join(root, ".next", "serve.cjs");

/**
 * V8's heap sizing for the server, each unless NODE_OPTIONS sets that option itself (a command-line
 * flag would override NODE_OPTIONS, so the operator's own choice must win by leaving ours out):
 *  - `--max-old-space-size=512`: V8 lets the old generation grow to up to 4× its live size before it
 *    collects when the heap limit is large (this machine's default is 4 GB). Under a 512 MB limit the
 *    factor is about 1.4, so the heap stays near what is live (about 60 MB serving the API; under 100 MB
 *    creating a campaign for a 50,000-group segment, the largest a segment may be).
 *  - `--max-semi-space-size=4`: young generation of 3 × 4 MB instead of 3 × 16 MB.
 * Measured with `npm run bench` (docs/history/benchmarks.md, "Memory"): peak RSS on PGlite 385–405 → 311–317 MB, with no
 * change in throughput or latency beyond run-to-run noise.
 */
export const heapFlags = [
  { option: "--max-old-space-size", value: "512" },
  { option: "--max-semi-space-size", value: "4" },
] as const;

export function defaultNodeFlags(nodeOptions = process.env.NODE_OPTIONS ?? ""): string[] {
  const given = nodeOptions.replaceAll("_", "-"); // V8 takes --max_old_space_size too
  return heapFlags.filter(({ option }) => !given.includes(option)).map(({ option, value }) => `${option}=${value}`);
}

/**
 * How to start the production server (scripts/serve.ts, bundled by the build) after ensureBuild:
 * `spawn(process.execPath, serverArgs(…))` from the project folder. `nodeArgs` come after the defaults,
 * so they can override them too (V8 keeps a flag's last value).
 */
export function serverArgs(opts: { port: number; hostname?: string; nodeArgs?: string[] }): string[] {
  return [...defaultNodeFlags(), ...(opts.nodeArgs ?? []), serverBundle, "--port", String(opts.port), ...(opts.hostname ? ["--hostname", opts.hostname] : [])];
}
