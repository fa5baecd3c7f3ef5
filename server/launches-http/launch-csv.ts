/**
 * The dashboard's CSV downloads of a launch (docs/launches.md#exports): GET /api/dashboard/launches/{id}/leads.csv and
 * /members.csv, authenticated by the session cookie, answered as the file streamed (server/launches/funnel/csv-export.ts), so
 * a plain `<a download>` saves it to disk as it comes and neither the server nor the browser holds it whole. They run
 * the REST exports' own procedures (launch-leads, launch-members with `format=csv`) through a session caller: the same
 * query options, checks and bytes (BOM included). Not signed in: 401; another account's launch: 404, as in the API.
 */
import { TRPCError } from "@trpc/server";
import { requestSession } from "../auth/session";
import { errorResult, fileHeaders, toResponse, trpcErrorResult } from "../http/envelope";
import { clientIp } from "../http/client-address";
import { appRouter } from "../root";
import { getServices } from "../services";
import { createCallerFactory, type FileStream } from "../trpc";

export const launchCsvFiles = ["leads", "members"] as const;
export type LaunchCsvFile = (typeof launchCsvFiles)[number];

/** `/api/dashboard/launches/{id}/{leads|members}.csv` → its parts (the test server routes by it; Next.js by folders). */
export const launchCsvPath = /^\/api\/dashboard\/launches\/([^/]+)\/(leads|members)\.csv$/;

const createCaller = createCallerFactory(appRouter);

/** The query options the REST exports take, read from the URL as they are (the procedures' zod schemas check them). */
const optionsOf = (url: URL, names: readonly string[]) =>
  Object.fromEntries(names.flatMap((n) => (url.searchParams.has(n) ? [[n, url.searchParams.get(n) ?? ""]] : [])));

export async function handleLaunchCsv(req: Request, launchId: string, file: LaunchCsvFile): Promise<Response> {
  if (req.method !== "GET") return toResponse(errorResult(405, "CSV downloads are GET requests.", "method_not_allowed", {}, { allow: "GET" }));
  const { db, provider } = await getServices();
  const session = await requestSession(db, req);
  if (!session) return toResponse(errorResult(401, "Sign in to the dashboard first.", "session_required"));
  let streamed: FileStream | undefined;
  const caller = createCaller({
    db,
    provider,
    caller: { kind: "session", tenantId: session.tenantId, userId: session.userId, role: session.role, email: session.email },
    now: new Date(),
    clientIp: clientIp(req.headers),
    sendFile: (f) => {
      streamed = f;
    },
  });
  const url = new URL(req.url);
  try {
    // The options are checked by the procedures' schemas (a bad one is 400 naming it), as over REST.
    if (file === "leads") {
      await caller.launchLeads.list({ id_launch: launchId, format: "csv", ...optionsOf(url, ["status", "delimiter"]) } as Parameters<
        typeof caller.launchLeads.list
      >[0]);
    } else {
      await caller.launchStats.members({ id_launch: launchId, format: "csv", ...optionsOf(url, ["delimiter"]) } as Parameters<
        typeof caller.launchStats.members
      >[0]);
    }
  } catch (err) {
    void streamed?.body.cancel().catch(() => {});
    if (err instanceof TRPCError) return toResponse(trpcErrorResult(err));
    throw err;
  }
  if (!streamed) return toResponse(errorResult(500, "Internal server error"));
  return toResponse({ status: 200, body: streamed.body, headers: fileHeaders(streamed) });
}
