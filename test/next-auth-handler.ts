import { createRequire } from "node:module";
import path from "node:path";
import { parseCookies } from "../server/http/cookies";

// next-auth's core is not in its package exports: loaded by file, as its own route handler does. Loaded at the first
// /api/auth request, not at import: most files that start a test server never sign in through it, and next-auth with
// the app's options costs about 0.1 s of each file's imports (docs/testing.md, "Where CI time goes").
const load = createRequire(import.meta.url);
interface NextAuthCore {
  AuthHandler: (args: unknown) => Promise<unknown>;
  getBody: (req: Request) => Promise<Record<string, string> | undefined>;
  toResponse: (res: unknown) => Response;
  authOptions: typeof import("../server/auth/next-auth").authOptions;
}
let core: Promise<NextAuthCore> | undefined;
const nextAuthCore = () =>
  (core ??= import("../server/auth/next-auth").then(({ authOptions }) => ({
    ...(load(path.resolve("node_modules/next-auth/core/index.js")) as Pick<NextAuthCore, "AuthHandler">),
    ...(load(path.resolve("node_modules/next-auth/next/utils.js")) as Pick<NextAuthCore, "getBody" | "toResponse">),
    authOptions,
  })));

/**
 * next-auth's own request handler (the core the app's /api/auth route runs) for the node:http test
 * server, which has no Next.js request scope for `next/headers`.
 */
export async function handleNextAuth(req: Request): Promise<Response> {
  const { AuthHandler, getBody, toResponse, authOptions } = await nextAuthCore();
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
