import { eq } from "drizzle-orm";
import type { NextAuthOptions } from "next-auth";
import { getServerSession } from "next-auth";
import CredentialsModule from "next-auth/providers/credentials";
import { safeCallbackUrl } from "../../app/_lib/callback-url";
import { getDb } from "../../db/client";
import { users } from "../../db/schema";
import { env, persistentSecret } from "../env";
import { verifyPassword } from "./password";

// next-auth ships CommonJS: bundlers hand us its default export, plain Node ESM (tsx scripts) the module.
const Credentials = ((CredentialsModule as unknown as { default?: typeof CredentialsModule }).default ?? CredentialsModule) as typeof CredentialsModule;

// next-auth reads its URL from the environment; APP_URL (or PORT) is enough for us.
process.env.NEXTAUTH_URL ??= env.appUrl;

declare module "next-auth" {
  interface Session {
    user: { id: string; tenantId: string; email: string; name: string };
  }
}

export const authOptions: NextAuthOptions = {
  // Read on first use, not at import: `next build` imports this module and must not write secrets.
  get secret() {
    return persistentSecret("NEXTAUTH_SECRET", "nextauth-secret");
  },
  session: { strategy: "jwt", maxAge: 7 * 24 * 60 * 60 },
  pages: { signIn: "/login" },
  providers: [
    Credentials({
      name: "E-mail e senha",
      credentials: { email: { label: "E-mail", type: "email" }, password: { label: "Senha", type: "password" } },
      async authorize(credentials) {
        const email = credentials?.email?.trim().toLowerCase();
        if (!email || !credentials?.password) return null;
        const db = await getDb();
        const [user] = await db.select().from(users).where(eq(users.email, email));
        if (!user || !(await verifyPassword(credentials.password, user.passwordHash))) return null;
        return { id: user.id, email: user.email, name: user.name, tenantId: user.tenantId };
      },
    }),
  ],
  callbacks: {
    // After sign-in/out: only a path of this site (app/_lib/callback-url.ts), made absolute on next-auth's base.
    redirect({ url, baseUrl }) {
      return baseUrl + safeCallbackUrl(url, baseUrl);
    },
    jwt({ token, user }) {
      if (user) token.tenantId = (user as unknown as { tenantId: string }).tenantId;
      return token;
    },
    session({ session, token }) {
      session.user = {
        id: token.sub!,
        tenantId: token.tenantId as string,
        email: token.email ?? "",
        name: token.name ?? "",
      };
      return session;
    },
  },
};

/** The signed-in dashboard user, or null (server components and route handlers). */
export const getSession = () => getServerSession(authOptions);
