import { buildOpenApiDocument } from "@/server/openapi";

export const dynamic = "force-dynamic";

let cached: string | undefined;

export function GET() {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return new Response(cached, { headers: { "content-type": "application/json; charset=utf-8" } });
}
