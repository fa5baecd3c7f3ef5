import { handleAuthorize } from "@/server/oauth/http";

export const dynamic = "force-dynamic";

export const GET = handleAuthorize;
