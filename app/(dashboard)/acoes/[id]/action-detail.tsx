"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Breadcrumb, DetailUnavailable, ErrorAlert, Loading, PageHeader, ProgressBar } from "../../../_components/ui";
import { formatDateTime, formatDayTimeSeconds } from "../../../_lib/format";
import { useTRPC } from "../../../_lib/trpc";
import { actionStatusLabel, badgeClass, describeAction, groupStateLabel, isActiveAction, reasonLabel } from "../labels";

/** Groups are changed one every 2 s per number: the page follows them while the action runs. */
const poll = 2000;

/** A group action's page: its status and counters, and each group's result (name, number used, state, reason, time). */
export function ActionDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const info = useQuery(
    trpc.groupActions.info.queryOptions(
      { id_action: id },
      {
        refetchInterval: (q) => (q.state.data && isActiveAction(q.state.data.status) ? poll : false),
        retry: (n, err) => err.data?.httpStatus !== 404 && err.data?.httpStatus !== 400 && n < 2,
      },
    ),
  );
  const cancel = useMutation(trpc.groupActions.cancel.mutationOptions({ onSettled: () => queryClient.invalidateQueries(trpc.groupActions.pathFilter()) }));

  if (info.isPending) return <Loading />;
  if (info.error) return <DetailUnavailable href="/launches" label="Lançamentos" notFound="Ação não encontrada" error={info.error} />;

  const a = info.data;
  const back = a.id_launch
    ? { href: `/launches/${encodeURIComponent(a.id_launch)}`, label: "Lançamento" }
    : { href: `/segments/${encodeURIComponent(a.id_segment ?? "")}`, label: "Segmento" };
  const title = a.name ?? describeAction(a.action);
  return (
    <>
      <Breadcrumb href={back.href} label={back.label} current={title} />
      <PageHeader
        title={title}
        description={
          <span className="header-meta">
            <span className={`badge ${badgeClass[a.status] ?? ""}`} data-testid="action-status">
              {actionStatusLabel[a.status]}
            </span>
            {a.name && <span>{describeAction(a.action)}</span>}
            <span>
              {a.status === "scheduled" ? "Agendada para" : "Marcada para"} {formatDateTime(a.scheduled_at)} (Brasília)
            </span>
          </span>
        }
        actions={
          isActiveAction(a.status) && (
            <button type="button" className="btn btn-danger" disabled={cancel.isPending} onClick={() => cancel.mutate({ id_action: a.id_action })}>
              Cancelar ação
            </button>
          )
        }
      />
      <ErrorAlert error={cancel.error} />

      <section className="card" aria-labelledby="progress-title">
        <h2 id="progress-title">Progresso</h2>
        <ProgressBar total={a.groups.total} sent={a.groups.done} failed={a.groups.failed} label="Grupos processados" />
        <p data-testid="action-counts">
          {a.groups.done} feitos · {a.groups.failed} com falha · {a.groups.pending} pendentes · {a.groups.total} grupos
        </p>
        <p className="muted small">
          Início {formatDateTime(a.started_at)} · fim {formatDateTime(a.finished_at)}.{" "}
          {isActiveAction(a.status) && <span className="live">Atualizando a cada 2 s.</span>}
        </p>
        {a.action.picture_url && (
          <p className="muted small">
            Foto: <code>{a.action.picture_url}</code>
          </p>
        )}
        {a.action.participants && <p className="muted small">Participantes: {a.action.participants.join(", ")}</p>}
      </section>

      <section className="card" aria-labelledby="results-title">
        <h2 id="results-title">Grupos</h2>
        <div className="table-scroll">
          <table className="table" aria-label="Resultado por grupo">
            <thead>
              <tr>
                <th scope="col">Grupo</th>
                <th scope="col">Número usado</th>
                <th scope="col">Situação</th>
                <th scope="col">Quando</th>
              </tr>
            </thead>
            <tbody>
              {a.results.map((r) => (
                <tr key={r.id_group} data-testid={`result-${r.id_group}`}>
                  <td>
                    <span className="muted">#{r.position}</span> {r.group_name ?? <code>{r.id_group}</code>}
                  </td>
                  <td>{r.id_channel ? `${r.channel_name ?? r.id_channel}${r.phone ? ` (${r.phone})` : ""}` : "—"}</td>
                  <td>
                    <span className={`badge ${badgeClass[r.state] ?? ""}`} data-testid="group-state">
                      {groupStateLabel[r.state]}
                    </span>
                    {r.reason && <span className="small block"> {reasonLabel(r.reason)}</span>}
                  </td>
                  <td>{formatDayTimeSeconds(r.at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}
