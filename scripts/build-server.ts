/**
 * Bundles the production server (scripts/serve.ts and the REST facade it serves) into .next/serve.cjs
 * with esbuild; ensure-build runs it after `next build`. Packages stay in node_modules: the bundle
 * `require`s them, so the drivers Next.js also loads from there (serverExternalPackages) are one copy.
 * Plain node runs the bundle: a TypeScript loader at run time (tsx) cost the server 120 MB.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { serverBundle } from "../boot/serve-args";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export async function buildServerBundle(): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: [path.join(root, "scripts/serve.ts")],
    outfile: serverBundle,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    packages: "external",
    // Class names are part of behaviour (DomainError's name, error logs).
    keepNames: true,
    sourcemap: "linked",
    logLevel: "warning",
    // As the `next` CLI does for `next start`, before anything is required.
    banner: { js: 'process.env.NODE_ENV = process.env.NODE_ENV || "production"; process.env.NEXT_RUNTIME = "nodejs";' },
  });
}
