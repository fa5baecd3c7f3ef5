import type { AnyProcedure, AnyRouter } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";

type ZodNode = { _zod?: { def?: Record<string, unknown> & { type?: string } } };

const coercible = new Set(["number", "boolean", "bigint", "date"]);

function pin(node: unknown, seen: WeakSet<object>) {
  const def = (node as ZodNode)?._zod?.def;
  if (!def || seen.has(def)) return;
  seen.add(def);
  if (def.type && coercible.has(def.type)) {
    // Reads stay false and the adapter's `def.coerce = true` becomes a no-op.
    Object.defineProperty(def, "coerce", { get: () => false, set: () => {}, configurable: false });
    return;
  }
  const children: unknown[] = [];
  const d = def as Record<string, unknown>;
  if (def.type === "object") children.push(...Object.values(d.shape as object));
  for (const key of ["element", "innerType", "in", "out", "left", "right", "valueType", "keyType"]) if (d[key]) children.push(d[key]);
  for (const key of ["options", "items"]) if (Array.isArray(d[key])) children.push(...(d[key] as unknown[]));
  for (const child of children) pin(child, seen);
}

/**
 * trpc-to-openapi turns on zod coercion for every number, boolean and date it can reach in an input,
 * body included, by mutating the shared schemas: `"false"` would become `true` and `""` 0, on the REST
 * facade and then on /api/trpc too. A JSON body has real types, so body inputs are pinned to strict
 * parsing; query inputs (GET) keep the coercion, since query values are always strings.
 */
export function pinBodyCoercion(router: AnyRouter) {
  const seen = new WeakSet<object>();
  for (const proc of Object.values(router._def.procedures as unknown as Record<string, AnyProcedure>)) {
    const meta = proc._def.meta as OpenApiMeta | undefined;
    if (meta?.openapi?.method === "GET") continue;
    for (const input of (proc._def as unknown as { inputs: unknown[] }).inputs ?? []) pin(input, seen);
  }
}
