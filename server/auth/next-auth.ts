import type { NextAuthOptions } from "next-auth";
import { getServerSession } from "next-auth";
import CredentialsModule from "next-auth/providers/credentials";
import type { MemberRole } from "../../db/schema";
import { safeCallbackUrl } from "./callback-url";
import { serverDb } from "../database";
import { exportNextAuthUrl } from "../env";
import { clientIp } from "../http/client-address";
import { currentMember, endSessions, sessionMaxAgeSeconds, sessionSecret, secureCookies } from "./session";
import { signIn, SignInThrottled, type SignedInUser } from "./sign-in";
import { throttledSignInError } from "./sign-in-error";

// next-auth ships CommonJS: bundlers hand us its default export, plain Node ESM (tsx scripts) the module.
const Credentials = ((CredentialsModule as unknown as { default?: typeof CredentialsModule }).default ?? CredentialsModule) as typeof CredentialsModule;

exportNextAuthUrl();

declare module "next-auth" {
  interface Session {
    user: { id: string; tenantId: string; email: string; name: string; role: MemberRole };
  }
}

/** A session whose version is behind the user's (server/auth/session.ts): next-auth then clears its cookie. */
class SessionEnded extends Error {
  constructor() {
    super("The session was ended (sign-out, password change, locked account, role change or removal from the account).");
    this.name = "SessionEnded";
  }
}

export const authOptions: NextAuthOptions = {
  // Read on first use, not at import: `next build` imports this module and must not write secrets.
  get secret() {
    return sessionSecret();
  },
  get useSecureCookies() {
    return secureCookies();
  },
  session: { strategy: "jwt", maxAge: sessionMaxAgeSeconds },
  pages: { signIn: "/login" },
  providers: [
    Credentials({
      name: "E-mail e senha",
      credentials: { email: { label: "E-mail", type: "email" }, password: { label: "Senha", type: "password" } },
      async authorize(credentials, req) {
        const ip = clientIp(new Headers(nodeHeaders(req?.headers)));
        try {
          return await signIn(await serverDb(), { email: credentials?.email, password: credentials?.password, ip });
        } catch (err) {
          // next-auth sends the message to the login page as ?error= (or signIn()'s `error`).
          if (err instanceof SignInThrottled) throw new Error(throttledSignInError(err.retryAfterSeconds));
          throw err;
        }
      },
    }),
  ],
  callbacks: {
    // After sign-in/out: only a path of this site (server/auth/callback-url.ts), made absolute on next-auth's base.
    redirect({ url, baseUrl }) {
      return baseUrl + safeCallbackUrl(url, baseUrl);
    },
    // Runs on sign-in (user given) and on every session read (getServerSession, /api/auth/session).
    async jwt({ token, user }) {
      if (user) {
        const signedIn = user as unknown as SignedInUser;
        token.tenantId = signedIn.tenantId;
        token.sv = signedIn.sessionVersion;
        return token;
      }
      const member = token.sub ? await currentMember(await serverDb(), token.sub, token.sv, token.tenantId) : undefined;
      if (!member) throw new SessionEnded();
      token.role = member.role;
      return token;
    },
    session({ session, token }) {
      session.user = {
        id: token.sub!,
        tenantId: token.tenantId as string,
        email: token.email ?? "",
        name: token.name ?? "",
        role: token.role as MemberRole,
      };
      return session;
    },
  },
  events: {
    // Signing out ends every session of the user, not only this browser's cookie (docs/security.md, "Sessions").
    async signOut({ token }) {
      if (token?.sub) await endSessions(await serverDb(), { userId: token.sub });
    },
  },
  logger: {
    // An ended session is an expected answer (no session), not an error worth a log line.
    error(code, metadata) {
      if ((metadata as { name?: string } | undefined)?.name === "SessionEnded") return;
      console.error(`[next-auth][error][${code}]`, metadata);
    },
  },
};

/** next-auth passes the request's headers as a plain object (values may be arrays). */
function nodeHeaders(headers: unknown): [string, string][] {
  if (!headers || typeof headers !== "object") return [];
  if (headers instanceof Headers) return [...headers.entries()];
  return Object.entries(headers as Record<string, unknown>).flatMap(([k, v]) =>
    v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : String(v)] as [string, string]],
  );
}

/** The signed-in dashboard user, or null (server components and route handlers). */
export const getSession = () => getServerSession(authOptions);
