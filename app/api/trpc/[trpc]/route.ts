import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getSession } from "@/server/auth/next-auth";
import { cappedRequest } from "@/server/http/body-limit";
import { clientIp } from "@/server/http/client-address";
import { appRouter } from "@/server/root";
import { getServices } from "@/server/services";
import type { Caller } from "@/server/trpc";

export const dynamic = "force-dynamic";

/** tRPC for the dashboard: the same routers as the REST facade, authenticated by the session cookie. */
async function handler(incoming: Request) {
  // Read within the cap (1 MiB; 413 past it) before tRPC's adapter reads it whole.
  const req = await cappedRequest(incoming);
  if (req instanceof Response) return req;
  const { db, provider } = await getServices();
  const session = await getSession();
  const caller: Caller = session?.user?.tenantId
    ? { kind: "session", tenantId: session.user.tenantId, userId: session.user.id }
    : { kind: "anonymous", credentials: "missing" };
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => ({ db, provider, caller, now: new Date(), clientIp: clientIp(req.headers) }),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") console.error("[trpc]", path, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST };
