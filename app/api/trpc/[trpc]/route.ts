import { handleTrpcRequest } from "@/server/trpc-http";

export const dynamic = "force-dynamic";

/** tRPC for the dashboard (server/trpc-http.ts: same-origin JSON mutations, the session cookie checked on each request). */
const handler = (req: Request) => handleTrpcRequest(req);

export { handler as GET, handler as POST };
