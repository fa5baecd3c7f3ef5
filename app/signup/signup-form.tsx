"use client";

import { useMutation } from "@tanstack/react-query";
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { errorMessage } from "../_lib/errors";
import { useTRPC } from "../_lib/trpc";
import { nameMaxLength, passwordMaxLength, passwordMinLength } from "../../server/text-limits";

export function SignupForm() {
  const trpc = useTRPC();
  const signUp = useMutation(trpc.account.signUp.mutationOptions());
  const [error, setError] = useState<string>();
  const [signingIn, setSigningIn] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const input = { name: String(form.get("name")), email: String(form.get("email")), password: String(form.get("password")) };
    setError(undefined);
    try {
      await signUp.mutateAsync(input);
    } catch (err) {
      setError(errorMessage(err));
      return;
    }
    setSigningIn(true);
    const result = await signIn("credentials", { email: input.email, password: input.password, redirect: false }).catch(() => undefined);
    if (result?.ok && !result.error) {
      window.location.assign("/channels");
      return;
    }
    setSigningIn(false);
    setError("Conta criada, mas não foi possível entrar automaticamente. Entre com seu e-mail e senha.");
  }

  const pending = signUp.isPending || signingIn;
  return (
    <form className="stack" onSubmit={onSubmit}>
      <label className="field">
        <span>Nome da empresa</span>
        <input name="name" autoComplete="organization" required maxLength={nameMaxLength} autoFocus />
      </label>
      <label className="field">
        <span>E-mail</span>
        <input name="email" type="email" autoComplete="email" required />
      </label>
      <div className="field">
        <label htmlFor="signup-password">Senha</label>
        <input
          id="signup-password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={passwordMinLength}
          maxLength={passwordMaxLength}
          aria-describedby="password-hint"
        />
        <small id="password-hint" className="muted">
          Pelo menos {passwordMinLength} caracteres.
        </small>
      </div>
      {error && (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      )}
      <button className="btn btn-primary" type="submit" disabled={pending}>
        {pending ? "Criando conta…" : "Criar conta"}
      </button>
    </form>
  );
}
