import { handleExternalRequest, type RestDeps } from "./http/rest";
import { resolveRestCallerAt } from "./resolve-caller";
import { appRouter } from "./root";
import { getServices } from "./services";

/** The REST facade's dependencies in this server: the app router, the composition root's services and the caller resolution. */
export const restDeps: RestDeps = { router: appRouter, services: getServices, resolveCaller: resolveRestCallerAt };

/** /api/external/*: the REST facade (server/http/rest.ts) with this server's dependencies. */
export function handleRestRequest(req: Request): Promise<Response> {
  return handleExternalRequest(req, restDeps);
}
