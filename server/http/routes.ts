import type { AnyProcedure } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { appRouter } from "../root";
import type { AppMeta } from "../trpc";

export interface RestRoute {
  procedurePath: string;
  method: string;
  /** Path as served, e.g. /api/external/edit-channel/{id_channel}. */
  path: string;
  pattern: RegExp;
  meta: OpenApiMeta<AppMeta>;
}

export const restPrefix = "/api";

/** Every procedure with OpenAPI meta, as the REST facade serves it. */
export const restRoutes: RestRoute[] = Object.entries(appRouter._def.procedures as unknown as Record<string, AnyProcedure>).flatMap(([procedurePath, proc]) => {
  const meta = proc._def.meta as OpenApiMeta<AppMeta> | undefined;
  if (!meta?.openapi) return [];
  const path = restPrefix + meta.openapi.path;
  const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+").replace(/[.]/g, "\\.")}/?$`);
  return [{ procedurePath, method: meta.openapi.method, path, pattern, meta }];
});

export function matchRoute(method: string, pathname: string) {
  const candidates = restRoutes.filter((r) => r.pattern.test(pathname));
  return { route: candidates.find((r) => r.method === method), allowed: candidates.map((r) => r.method) };
}
