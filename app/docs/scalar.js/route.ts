import { readFile } from "node:fs/promises";
import path from "node:path";

export const dynamic = "force-dynamic";

let bundle: Promise<Buffer> | undefined;

/** Scalar's standalone browser bundle, straight from node_modules. */
export async function GET() {
  bundle ??= readFile(path.join(process.cwd(), "node_modules/@scalar/api-reference/dist/browser/standalone.js"));
  return new Response(new Uint8Array(await bundle), {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" },
  });
}
