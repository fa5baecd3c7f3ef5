"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { signIn } from "next-auth/react";
import { type FormEvent, useState } from "react";
import { errorMessage } from "../../_lib/errors";
import { useTRPC } from "../../_lib/trpc";
import { nameMaxLength, passwordMaxLength, passwordMinLength } from "../../../server/text-limits";

const roleLabels = { owner: "proprietário", admin: "administrador", editor: "editor", viewer: "leitor" } as const;

export function Invitation({ token, signedInAs }: { token: string; signedInAs?: string }) {
  const trpc = useTRPC();
  const preview = useQuery(trpc.members.invitation.queryOptions({ token }, { retry: false }));
  const accept = useMutation(trpc.members.accept.mutationOptions({ onSuccess: () => window.location.assign("/overview") }));
  const signUp = useMutation(trpc.members.signUpWithInvitation.mutationOptions());
  const [error, setError] = useState<string>();
  const [signingIn, setSigningIn] = useState(false);

  if (preview.isPending) return <p>Carregando…</p>;
  const inv = preview.data;
  if (!inv?.valid) {
    return (
      <p className="alert alert-error" role="alert">
        Este convite não é válido: já foi usado, foi revogado ou expirou. Peça um novo convite.
      </p>
    );
  }

  async function onSignUp(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const password = String(form.get("password"));
    setError(undefined);
    try {
      const { email } = await signUp.mutateAsync({ token, name: String(form.get("name")), password });
      setSigningIn(true);
      const result = await signIn("credentials", { email, password, redirect: false }).catch(() => undefined);
      if (result?.ok && !result.error) {
        window.location.assign("/overview");
        return;
      }
      setSigningIn(false);
      setError("Cadastro feito, mas não foi possível entrar automaticamente. Entre com seu e-mail e senha.");
    } catch (err) {
      setError(errorMessage(err));
    }
  }

  return (
    <div className="stack">
      <p>
        Você foi convidado para a conta <strong>{inv.accountName}</strong> como <strong>{roleLabels[inv.role]}</strong> ({inv.email}).
      </p>
      {signedInAs ? (
        <>
          <p className="muted">Você entrou como {signedInAs}.</p>
          <button type="button" className="btn btn-primary" disabled={accept.isPending} onClick={() => accept.mutate({ token })}>
            Aceitar convite
          </button>
          {accept.error && (
            <p className="alert alert-error" role="alert">
              {errorMessage(accept.error)}
            </p>
          )}
        </>
      ) : (
        <>
          <form className="stack" onSubmit={onSignUp}>
            <label className="field">
              <span>Seu nome</span>
              <input name="name" autoComplete="name" required maxLength={nameMaxLength} autoFocus />
            </label>
            <label className="field">
              <span>Senha</span>
              <input name="password" type="password" autoComplete="new-password" required minLength={passwordMinLength} maxLength={passwordMaxLength} />
            </label>
            {error && (
              <p className="alert alert-error" role="alert">
                {error}
              </p>
            )}
            <button className="btn btn-primary" type="submit" disabled={signUp.isPending || signingIn}>
              Criar acesso e entrar
            </button>
          </form>
          <p className="auth-switch">
            Já tem conta? <Link href={`/login?callbackUrl=${encodeURIComponent(`/convite/${token}`)}`}>Entre para aceitar</Link>
          </p>
        </>
      )}
    </div>
  );
}
