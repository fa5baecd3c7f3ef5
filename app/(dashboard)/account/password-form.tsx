"use client";

import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert, PageHeader } from "../../_components/ui";
import { useTRPC } from "../../_lib/trpc";
import { passwordMaxLength, passwordMinLength } from "../../../server/text-limits";

/**
 * The signed-in user's password (account.changePassword). The server ends every other session of the
 * user and sends this browser a new session cookie, so the user stays here, signed in.
 */
export function PasswordForm() {
  const trpc = useTRPC();
  const change = useMutation(trpc.account.changePassword.mutationOptions());
  const [mismatch, setMismatch] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formElement = e.currentTarget;
    const form = new FormData(formElement);
    const newPassword = String(form.get("newPassword"));
    const differs = newPassword !== String(form.get("confirmPassword"));
    setMismatch(differs);
    if (differs) return;
    change.reset();
    await change.mutateAsync({ currentPassword: String(form.get("currentPassword")), newPassword }).then(
      () => formElement.reset(),
      () => {},
    );
  }

  return (
    <>
      <PageHeader title="Conta" description="Sua senha de acesso ao painel." />
      <section className="card" aria-labelledby="password-title">
        <h2 id="password-title">Alterar senha</h2>
        <form className="stack" onSubmit={onSubmit}>
          <div className="field">
            <label htmlFor="current-password">Senha atual</label>
            <input id="current-password" name="currentPassword" type="password" autoComplete="current-password" required maxLength={passwordMaxLength} />
          </div>
          <div className="field">
            <label htmlFor="new-password">Nova senha</label>
            <input
              id="new-password"
              name="newPassword"
              type="password"
              autoComplete="new-password"
              required
              minLength={passwordMinLength}
              maxLength={passwordMaxLength}
              aria-describedby="new-password-hint"
            />
            <small id="new-password-hint" className="muted">
              Pelo menos {passwordMinLength} caracteres. Ao trocar a senha, as sessões abertas em outros navegadores são encerradas.
            </small>
          </div>
          <div className="field">
            <label htmlFor="confirm-password">Confirme a nova senha</label>
            <input
              id="confirm-password"
              name="confirmPassword"
              type="password"
              autoComplete="new-password"
              required
              minLength={passwordMinLength}
              maxLength={passwordMaxLength}
            />
          </div>
          {mismatch && (
            <p className="alert alert-error" role="alert">
              A confirmação não é igual à nova senha.
            </p>
          )}
          <ErrorAlert error={change.error} />
          {change.isSuccess && (
            <p className="alert alert-success" role="status">
              Senha alterada. As outras sessões foram encerradas.
            </p>
          )}
          <div className="row">
            <button className="btn btn-primary" type="submit" disabled={change.isPending}>
              {change.isPending ? "Alterando…" : "Alterar senha"}
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
