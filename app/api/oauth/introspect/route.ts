import { handleIntrospect } from "@/server/oauth/http";

export const dynamic = "force-dynamic";

export const POST = handleIntrospect;
