import { handleExternalRequest } from "@/server/http/rest";

export const dynamic = "force-dynamic";

export const GET = handleExternalRequest;
export const POST = handleExternalRequest;
export const PUT = handleExternalRequest;
export const PATCH = handleExternalRequest;
export const DELETE = handleExternalRequest;
