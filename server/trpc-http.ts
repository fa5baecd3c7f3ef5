import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { requestSession } from "./auth/session";
import { cappedRequest } from "./http/body-limit";
import { clientIp } from "./http/client-address";
import { crossSiteRefusal } from "./http/same-origin";
import { appRouter } from "./root";
import { getServices } from "./services";
import type { Caller } from "./trpc";

/**
 * /api/trpc, the dashboard's API (app/api/trpc/[trpc]/route.ts; the test server calls it too): the same
 * routers as the REST facade, authenticated by the session cookie. A POST that is not same-origin JSON is
 * refused with 403 before any procedure runs (docs/security.md, "Dashboard mutations"), and the session is
 * checked against the user's session version on every request (docs/security.md, "Sessions").
 */
export async function handleTrpcRequest(incoming: Request): Promise<Response> {
  // Read within the cap (1 MiB; 413 past it) before tRPC's adapter reads it whole.
  const req = await cappedRequest(incoming);
  if (req instanceof Response) return req;
  const refused = crossSiteRefusal(req);
  if (refused) return forbidden(refused);
  const { db, provider } = await getServices();
  const session = await requestSession(db, req);
  const caller: Caller = session ? { kind: "session", ...session } : { kind: "anonymous", credentials: "missing" };
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: ({ resHeaders }) => ({ db, provider, caller, now: new Date(), clientIp: clientIp(req.headers), resHeaders }),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") console.error("[trpc]", path, error.cause ?? error);
    },
  });
}

/** A refusal in tRPC's error shape (JSON-RPC code -32003 is tRPC's FORBIDDEN), so the dashboard shows it as any other error. */
function forbidden(message: string): Response {
  const error = { message, code: -32003, data: { code: "FORBIDDEN", httpStatus: 403, domainCode: "cross_site_refused" } };
  return new Response(JSON.stringify({ error }), { status: 403, headers: { "content-type": "application/json", "cache-control": "no-store" } });
}
