import { handleRestRequest } from "@/server/rest-api";

export const dynamic = "force-dynamic";

export const GET = handleRestRequest;
export const POST = handleRestRequest;
export const PUT = handleRestRequest;
export const PATCH = handleRestRequest;
export const DELETE = handleRestRequest;
