"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorAlert } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";

/** Pause / resume / cancel, offered according to the status; cancelling asks first. */
export function CampaignActions({ id, name, status }: { id: string; name: string; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const onSuccess = async () => {
    setConfirming(false);
    await Promise.all([
      queryClient.invalidateQueries(trpc.campaigns.info.queryFilter({ id_campaign: id })),
      queryClient.invalidateQueries(trpc.campaigns.deliveries.queryFilter({ id_campaign: id })),
      queryClient.invalidateQueries(trpc.campaigns.list.queryFilter()),
    ]);
  };
  const pause = useMutation(trpc.campaigns.pause.mutationOptions({ onSuccess }));
  const resume = useMutation(trpc.campaigns.resume.mutationOptions({ onSuccess }));
  const cancel = useMutation(trpc.campaigns.cancel.mutationOptions({ onSuccess }));
  const busy = pause.isPending || resume.isPending || cancel.isPending;
  const canPause = status === "pending" || status === "sending";
  const canResume = status === "paused";
  const canCancel = canPause || canResume;
  if (!canCancel) return null;

  return (
    <div className="campaign-actions">
      {confirming ? (
        <fieldset className="confirm" aria-label="Confirmar cancelamento">
          <span>Cancelar “{name}”? Os grupos que ainda não receberam a mensagem não vão recebê-la.</span>
          <div className="row">
            <button type="button" className="btn btn-danger" disabled={busy} onClick={() => cancel.mutate({ id_campaign: id })}>
              Confirmar cancelamento
            </button>
            <button type="button" className="btn btn-ghost" onClick={() => setConfirming(false)}>
              Voltar
            </button>
          </div>
        </fieldset>
      ) : (
        <div className="row">
          {canPause && (
            <button type="button" className="btn" disabled={busy} onClick={() => pause.mutate({ id_campaign: id })}>
              Pausar
            </button>
          )}
          {canResume && (
            <button type="button" className="btn btn-primary" disabled={busy} onClick={() => resume.mutate({ id_campaign: id })}>
              Retomar
            </button>
          )}
          <button type="button" className="btn btn-ghost-danger" disabled={busy} onClick={() => setConfirming(true)}>
            Cancelar campanha
          </button>
        </div>
      )}
      <ErrorAlert error={pause.error ?? resume.error ?? cancel.error} />
    </div>
  );
}
