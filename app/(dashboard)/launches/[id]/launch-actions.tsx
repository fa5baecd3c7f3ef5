"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";

/**
 * Pause, resume or close the link. A paused or closed link sends people to `closed_url`, or shows a
 * page saying the groups are closed; closing asks for that address first.
 */
export function LaunchActions({ id, status, closedUrl }: { id: string; status: string; closedUrl?: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [closing, setClosing] = useState(false);
  const edit = useMutation(
    trpc.launches.edit.mutationOptions({
      onSuccess: async () => {
        setClosing(false);
        await Promise.all([queryClient.invalidateQueries(trpc.launches.info.queryFilter()), queryClient.invalidateQueries(trpc.launches.list.queryFilter())]);
      },
    }),
  );

  function onClose(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const url = String(new FormData(e.currentTarget).get("closed_url") ?? "").trim();
    edit.mutate({ id_launch: id, status: "closed", closed_url: url || null });
  }

  return (
    <div className="campaign-actions">
      {closing ? (
        <form className="confirm" aria-label="Encerrar o lançamento" onSubmit={onClose}>
          <span>Encerrar o lançamento? O link deixa de levar aos grupos.</span>
          <label className="field">
            <span>Link para quem chegar depois (opcional)</span>
            <input
              name="closed_url"
              type="url"
              defaultValue={closedUrl ?? ""}
              pattern="https://.+"
              title="Use um endereço que comece com https://"
              placeholder="https://exemplo.com.br/lista-de-espera"
            />
          </label>
          <div className="row">
            <button type="submit" className="btn btn-danger" disabled={edit.isPending}>
              Confirmar encerramento
            </button>
            <button type="button" className="btn btn-ghost" onClick={() => setClosing(false)}>
              Voltar
            </button>
          </div>
        </form>
      ) : (
        <div className="row">
          {status === "active" && (
            <button type="button" className="btn" disabled={edit.isPending} onClick={() => edit.mutate({ id_launch: id, status: "paused" })}>
              Pausar link
            </button>
          )}
          {status !== "active" && (
            <button type="button" className="btn btn-primary" disabled={edit.isPending} onClick={() => edit.mutate({ id_launch: id, status: "active" })}>
              {status === "closed" ? "Reabrir link" : "Retomar link"}
            </button>
          )}
          {status !== "closed" && (
            <button type="button" className="btn btn-ghost-danger" disabled={edit.isPending} onClick={() => setClosing(true)}>
              Encerrar
            </button>
          )}
        </div>
      )}
      <ErrorAlert error={edit.error} />
    </div>
  );
}
