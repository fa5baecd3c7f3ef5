import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { getSession } from "@/server/auth/next-auth";
import { env } from "@/server/env";
import { AuthCard } from "../_components/auth-card";
import { throttledMessage, throttledRetryAfter } from "@/server/auth/sign-in-error";
import { safeCallbackUrl } from "../../server/auth/callback-url";
import { LoginForm } from "./login-form";

export const metadata: Metadata = { title: "Entrar" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  // next-auth writes absolute callback URLs on APP_URL; only those (or plain paths) are followed.
  const callbackUrl = safeCallbackUrl(params.callbackUrl, new URL(env.appUrl).origin);
  if (await getSession()) redirect(callbackUrl);
  // next-auth sends failed credential logins back here with ?error=CredentialsSignin (or TooManyAttempts:<s>).
  const wait = throttledRetryAfter(typeof params.error === "string" ? params.error : undefined);
  const initialError = wait !== undefined ? throttledMessage(wait) : params.error ? "E-mail ou senha incorretos." : undefined;
  return (
    <AuthCard title="Entrar" subtitle="Acesse o painel da sua empresa.">
      <LoginForm callbackUrl={callbackUrl} initialError={initialError} />
      <p className="auth-switch">
        Ainda não tem conta? <Link href="/signup">Criar conta</Link>
      </p>
    </AuthCard>
  );
}
