import { createRequire } from "node:module";
import path from "node:path";
import { authOptions } from "../server/auth/next-auth";
import { parseCookies } from "../server/http/cookies";

// next-auth's core is not in its package exports: loaded by file, as its own route handler does.
const load = createRequire(import.meta.url);
const { AuthHandler } = load(path.resolve("node_modules/next-auth/core/index.js")) as { AuthHandler: (args: unknown) => Promise<unknown> };
const { getBody, toResponse } = load(path.resolve("node_modules/next-auth/next/utils.js")) as {
  getBody: (req: Request) => Promise<Record<string, string> | undefined>;
  toResponse: (res: unknown) => Response;
};

/**
 * next-auth's own request handler (the core the app's /api/auth route runs) for the node:http test
 * server, which has no Next.js request scope for `next/headers`.
 */
export async function handleNextAuth(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const [action, providerId] = url.pathname.replace(/^\/api\/auth\//, "").split("/");
  const query = Object.fromEntries(url.searchParams);
  const cookies = parseCookies(req.headers.get("cookie"));
  const internal = await AuthHandler({
    req: {
      body: await getBody(req),
      query,
      cookies,
      headers: Object.fromEntries(req.headers),
      method: req.method,
      action,
      providerId,
      error: query.error ?? providerId,
    },
    options: authOptions,
  });
  return toResponse(internal);
}
