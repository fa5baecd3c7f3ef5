"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert, QueryTable } from "../../../_components/ui";
import { formatDateTime } from "../../../_lib/format";
import { useTRPC } from "../../../_lib/trpc";
import { emptyMetaDraft, type MetaDraft, MetaFields } from "../meta-fields";

type MetaSettings = { pixel_id: string; event_name: string; test_event_code: string | null } | null;

const stateLabel: Record<string, string> = { pending: "Na fila", sent: "Enviado", failed: "Falhou", canceled: "Cancelado" };
/** The webhook log's delivery badges (same four states). */
const stateBadge: Record<string, string> = {
  pending: "badge badge-delivery-pending",
  sent: "badge badge-delivery-sent",
  failed: "badge badge-delivery-failed",
  canceled: "badge badge-canceled",
};

/**
 * The launch's Meta Conversions API (docs/launches.md#metas-conversions-api): its settings (the token never shown,
 * only that one is saved), a form to change or turn them off, and the log of the latest events.
 */
export function MetaPanel({ id, meta }: { id: string; meta: MetaSettings }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<MetaDraft>(emptyMetaDraft);
  const log = useQuery(trpc.launchStats.metaEvents.queryOptions({ id_launch: id, limit: 20 }, { refetchInterval: 5000 }));
  const edit = useMutation(
    trpc.launches.edit.mutationOptions({
      onSuccess: async () => {
        setEditing(false);
        await queryClient.invalidateQueries(trpc.launches.info.queryFilter());
      },
    }),
  );

  function open() {
    setDraft(meta ? { pixelId: meta.pixel_id, accessToken: "", eventName: meta.event_name, testEventCode: meta.test_event_code ?? "" } : emptyMetaDraft);
    setEditing(true);
  }

  function onSave(e: FormEvent) {
    e.preventDefault();
    edit.mutate({
      id_launch: id,
      tracking: {
        meta: {
          pixel_id: draft.pixelId.trim(),
          // Empty: the saved token stays.
          access_token: draft.accessToken.trim() || undefined,
          event_name: draft.eventName.trim() || "Lead",
          test_event_code: draft.testEventCode.trim() || null,
        },
      },
    });
  }

  const totals = log.data?.totals;
  return (
    <section className="card" aria-labelledby="meta-title" data-testid="meta-panel">
      <div className="row space-between wrap">
        <h2 id="meta-title">API de Conversões da Meta</h2>
        {!editing && (
          <div className="row">
            <button type="button" className="btn" onClick={open}>
              {meta ? "Alterar" : "Configurar"}
            </button>
            {meta && (
              <button
                type="button"
                className="btn btn-ghost-danger"
                disabled={edit.isPending}
                onClick={() => edit.mutate({ id_launch: id, tracking: { meta: null } })}
              >
                Desativar
              </button>
            )}
          </div>
        )}
      </div>
      {editing ? (
        <form className="stack" aria-label="API de Conversões da Meta" onSubmit={onSave}>
          <MetaFields draft={draft} onChange={setDraft} tokenOptional={meta !== null} />
          <div className="row">
            <button type="submit" className="btn btn-primary" disabled={edit.isPending || !draft.pixelId.trim()}>
              Salvar
            </button>
            <button type="button" className="btn btn-ghost" onClick={() => setEditing(false)}>
              Cancelar
            </button>
          </div>
        </form>
      ) : meta ? (
        <dl className="stats" aria-label="Configuração da Meta">
          <div className="stat">
            <dt>Pixel</dt>
            <dd data-testid="meta-pixel">{meta.pixel_id}</dd>
          </div>
          <div className="stat">
            <dt>Evento</dt>
            <dd data-testid="meta-event-name">{meta.event_name}</dd>
          </div>
          <div className="stat">
            <dt>Token</dt>
            <dd data-testid="meta-token">Salvo</dd>
          </div>
          {meta.test_event_code && (
            <div className="stat">
              <dt>Código de teste</dt>
              <dd>{meta.test_event_code}</dd>
            </div>
          )}
        </dl>
      ) : (
        <p className="muted">Desativada: nenhum evento é enviado. Configure o pixel para enviar um evento do servidor a cada clique contado no link.</p>
      )}
      <ErrorAlert error={edit.error} />

      <h3>Últimos eventos</h3>
      {totals && (
        <p className="muted small" data-testid="meta-totals">
          {totals.sent} enviados · {totals.pending} na fila · {totals.failed} falharam{totals.canceled > 0 ? ` · ${totals.canceled} cancelados` : ""}
        </p>
      )}
      <div className="table-scroll">
        <QueryTable
          query={{ isPending: log.isPending, error: log.error, data: log.data?.events }}
          empty="Nenhum evento ainda: cada clique contado no link com o pixel configurado aparece aqui."
          columns={["Clique", "Evento", "Situação", "Tentativas", "Último erro"]}
          label="Eventos enviados à Meta"
        >
          {(rows) =>
            rows.map((e) => (
              <tr key={e.event_id} data-testid="meta-event-row">
                <td>{formatDateTime(e.at)}</td>
                <td>
                  {e.event_name}
                  {e.fbc && <small className="muted"> (fbclid)</small>}
                </td>
                <td>
                  <span className={stateBadge[e.state] ?? "badge"} data-testid="meta-event-state">
                    {stateLabel[e.state] ?? e.state}
                  </span>
                  {e.next_attempt_at && <small className="muted"> nova tentativa {formatDateTime(e.next_attempt_at)}</small>}
                </td>
                <td className="num">{e.attempts}</td>
                <td data-testid="meta-event-error">{e.last_error ?? <span className="muted">—</span>}</td>
              </tr>
            ))
          }
        </QueryTable>
      </div>
    </section>
  );
}
