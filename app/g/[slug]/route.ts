import { publicLinkResponse } from "@/server/launches/link/public-link";

export const dynamic = "force-dynamic";

/**
 * The launches' public join link under `next dev`. The production server (server/http/app-server.ts)
 * answers `/g/*` itself before Next.js; this route is what Next.js would serve without it.
 */
export const GET = publicLinkResponse;
export const HEAD = publicLinkResponse;
