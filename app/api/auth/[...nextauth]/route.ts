import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { authOptions } from "@/server/auth/next-auth";
import { cappedRequest } from "@/server/http/body-limit";

const nextAuth = NextAuth(authOptions) as (req: Request, ctx: unknown) => Promise<Response>;

/** next-auth reads the body whole: it gets a copy read within the cap (1 MiB; 413 past it). */
async function handler(req: Request, ctx: unknown) {
  const capped = await cappedRequest(req);
  // A NextRequest again: next-auth reads `req.nextUrl`.
  return capped instanceof Response ? capped : nextAuth(capped === req ? req : new NextRequest(capped), ctx);
}

export { handler as GET, handler as POST };
