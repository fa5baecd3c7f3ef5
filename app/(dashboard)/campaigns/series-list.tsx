"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { EmptyState, ErrorAlert, Loading } from "../../_components/ui";
import { formatDateTime, messageTypeLabel } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { weekdays } from "./new/repeat-fields";

type Series = RouterOutputs["series"]["list"]["series"][number];

/** Série (API `series`, docs/series.md): status labels in pt-BR. */
const seriesStatusLabel: Record<Series["status"], string> = { active: "Ativa", paused: "Pausada", stopped: "Encerrada" };
const seriesBadge: Record<Series["status"], string> = { active: "sending", paused: "paused", stopped: "canceled" };

function describeDays(days: string[]) {
  if (days.length === 7) return "Todos os dias";
  return weekdays
    .filter(([k]) => days.includes(k))
    .map(([, label]) => label)
    .join(", ");
}

/** The campaigns page's "Séries" section: repeating campaigns with pause / resume / stop (edit-series, delete-series). */
export function SeriesList() {
  const trpc = useTRPC();
  const series = useQuery(trpc.series.list.queryOptions(undefined, { refetchInterval: 15_000 }));
  return (
    <section className="card" id="series" aria-labelledby="series-title">
      <h2 id="series-title">Séries (campanhas repetidas)</h2>
      <p className="muted small">Cada envio de uma série vira uma campanha própria na lista acima, criada no dia e hora marcados (horário de Brasília).</p>
      {series.isPending ? (
        <Loading />
      ) : series.error ? (
        <ErrorAlert error={series.error} />
      ) : series.data.series.length === 0 ? (
        <EmptyState>Nenhuma série. Em Nova campanha, escolha “Repetir” no passo Envio.</EmptyState>
      ) : (
        <div className="table-scroll">
          <table className="table" aria-label="Séries">
            <thead>
              <tr>
                <th scope="col">Série</th>
                <th scope="col">Quando</th>
                <th scope="col">Situação</th>
                <th scope="col">Próximo envio</th>
                <th scope="col">Ações</th>
              </tr>
            </thead>
            <tbody>
              {series.data.series.map((s) => (
                <SeriesRow key={s.id_series} series={s} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function SeriesRow({ series: s }: { series: Series }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const onSuccess = async () => {
    setConfirming(false);
    await queryClient.invalidateQueries(trpc.series.list.queryFilter());
    // Pausing, resuming, a new schedule or stopping cancels or makes the series' future run (a campaign).
    await queryClient.invalidateQueries(trpc.campaigns.list.queryFilter());
  };
  const edit = useMutation(trpc.series.edit.mutationOptions({ onSuccess }));
  const stop = useMutation(trpc.series.delete.mutationOptions({ onSuccess }));
  const busy = edit.isPending || stop.isPending;
  return (
    <tr data-testid="series-row">
      <td>
        <strong>{s.name}</strong>
        <div className="muted small">
          {messageTypeLabel[s.message_type] ?? s.message_type} · {s.segment_name} · {s.runs} {s.runs === 1 ? "envio" : "envios"}
        </div>
      </td>
      <td>
        {describeDays(s.repeat.days)} às {s.repeat.time}
        <div className="muted small">até {s.repeat.until}</div>
      </td>
      <td>
        <span className={`badge badge-${seriesBadge[s.status]}`} data-testid="series-status">
          {seriesStatusLabel[s.status]}
        </span>
      </td>
      <td className="nowrap">
        {s.next_run_at && s.next_id_campaign ? (
          <Link href={`/campaigns/${s.next_id_campaign}`} data-testid="series-next-run">
            {formatDateTime(s.next_run_at)}
          </Link>
        ) : (
          "—"
        )}
      </td>
      <td>
        {s.status !== "stopped" &&
          (confirming ? (
            <div className="row wrap">
              <button type="button" className="btn btn-danger" disabled={busy} onClick={() => stop.mutate({ id_series: s.id_series })}>
                Confirmar encerramento
              </button>
              <button type="button" className="btn btn-ghost" onClick={() => setConfirming(false)}>
                Voltar
              </button>
            </div>
          ) : (
            <div className="row wrap">
              {s.status === "active" ? (
                <button type="button" className="btn" disabled={busy} onClick={() => edit.mutate({ id_series: s.id_series, status: "paused" })}>
                  Pausar
                </button>
              ) : (
                <button type="button" className="btn btn-primary" disabled={busy} onClick={() => edit.mutate({ id_series: s.id_series, status: "active" })}>
                  Retomar
                </button>
              )}
              <button type="button" className="btn btn-ghost-danger" disabled={busy} onClick={() => setConfirming(true)}>
                Encerrar
              </button>
            </div>
          ))}
        <ErrorAlert error={edit.error ?? stop.error} />
      </td>
    </tr>
  );
}
