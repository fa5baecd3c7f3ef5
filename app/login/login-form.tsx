"use client";

import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { throttledMessage, throttledRetryAfter } from "@/server/auth/sign-in-error";

export function LoginForm({ callbackUrl, initialError }: { callbackUrl: string; initialError?: string }) {
  const [error, setError] = useState(initialError);
  const [pending, setPending] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setPending(true);
    setError(undefined);
    const result = await signIn("credentials", {
      email: String(form.get("email")),
      password: String(form.get("password")),
      redirect: false,
    }).catch(() => undefined);
    if (result?.ok && !result.error) {
      // A full navigation, so every server component sees the new session cookie.
      window.location.assign(callbackUrl);
      return;
    }
    setPending(false);
    const wait = throttledRetryAfter(result?.error);
    if (wait !== undefined) setError(throttledMessage(wait));
    else
      setError(
        result?.error === "CredentialsSignin" || result?.status === 401 ? "E-mail ou senha incorretos." : "Não foi possível entrar agora. Tente de novo.",
      );
  }

  return (
    <form className="stack" onSubmit={onSubmit}>
      <label className="field">
        <span>E-mail</span>
        <input name="email" type="email" autoComplete="email" required autoFocus />
      </label>
      <label className="field">
        <span>Senha</span>
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      {error && (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      )}
      <button className="btn btn-primary" type="submit" disabled={pending}>
        {pending ? "Entrando…" : "Entrar"}
      </button>
    </form>
  );
}
