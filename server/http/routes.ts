import type { AnyProcedure, AnyTRPCRouter } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
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

/** Every procedure of the router (the app router, handed in: server/http knows no domain) with OpenAPI meta, as the REST facade serves it. */
export const restRoutesOf = (router: AnyTRPCRouter): RestRoute[] =>
  Object.entries(router._def.procedures as unknown as Record<string, AnyProcedure>).flatMap(([procedurePath, proc]) => {
    const meta = proc._def.meta as OpenApiMeta<AppMeta> | undefined;
    if (!meta?.openapi) return [];
    const path = restPrefix + meta.openapi.path;
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+").replace(/[.]/g, "\\.")}/?$`);
    return [{ procedurePath, method: meta.openapi.method, path, pattern, meta }];
  });

export function matchRoute(routes: RestRoute[], method: string, pathname: string) {
  const candidates = routes.filter((r) => r.pattern.test(pathname));
  return { route: candidates.find((r) => r.method === method), allowed: candidates.map((r) => r.method) };
}

/**
 * A body field named like one of the route's path parameters with another value (e.g. `id_launch` in
 * the body of edit-launch/{id_launch}): the path names the object, so such a field would be silently
 * ignored. Returns the field's name, for a 400 that names it.
 */
export function pathParamOverridden(route: RestRoute, pathname: string, body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  if (names.length === 0) return undefined;
  const values = new RegExp(route.pattern.source.replaceAll("[^/]+", "([^/]+)")).exec(pathname);
  if (!values) return undefined;
  return names.find((name, i) => {
    if (!(name in body)) return false;
    let value: string;
    try {
      value = decodeURIComponent(values[i + 1]);
    } catch {
      return false;
    }
    return (body as Record<string, unknown>)[name] !== value;
  });
}
