"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { SigningSecret } from "../../_components/signing-secret";
import { ErrorAlert, Field, Loading, PageHeader, QueryTable } from "../../_components/ui";
import { formatDayTimeSeconds } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";

const types = [
  {
    type: "campaign_status",
    field: "campaign_status_url",
    label: "Status da campanha",
    hint: "A cada mudança de status (pendente, enviando, pausada, concluída…).",
  },
  {
    type: "campaign_progress",
    field: "campaign_progress_url",
    label: "Progresso da campanha",
    hint: "No máximo um por segundo por campanha, mais um ao terminar.",
  },
  { type: "channel_status", field: "channel_status_url", label: "Status do canal", hint: "Quando um canal conecta ou desconecta." },
  {
    type: "group_activity",
    field: "group_activity_url",
    label: "Atividade dos grupos",
    hint: "Lançamentos: grupo criado, grupo cheio, link quebrado e entradas e saídas (no máximo um aviso por grupo por minuto).",
  },
] as const;

type WebhookType = (typeof types)[number]["type"];

const stateLabel: Record<string, string> = { pending: "Pendente", delivered: "Entregue", failed: "Falhou", canceled: "Cancelado" };
const stateBadge: Record<string, string> = {
  pending: "badge-delivery-pending",
  delivered: "badge-delivery-sent",
  failed: "badge-delivery-failed",
  canceled: "badge-canceled",
};
const typeLabel: Record<string, string> = Object.fromEntries(types.map((t) => [t.type, t.label]));

export function Webhooks() {
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={
          <>
            Receba avisos de campanhas, canais e lançamentos no seu sistema. Cada envio é assinado no padrão{" "}
            <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> (cabeçalhos <code>webhook-id</code>, <code>webhook-timestamp</code>,{" "}
            <code>webhook-signature</code>).
          </>
        }
      />
      <UrlsCard />
      <SecretCard />
      <DeliveryLog />
    </>
  );
}

function UrlsCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const config = useQuery(trpc.webhooks.list.queryOptions());
  const [saved, setSaved] = useState<string[]>();
  const edit = useMutation(
    trpc.webhooks.edit.mutationOptions({
      onSuccess: (res) => {
        setSaved(res.updated);
        void queryClient.invalidateQueries(trpc.webhooks.list.queryFilter());
      },
    }),
  );
  const [results, setResults] = useState<Partial<Record<WebhookType, { status: number; message: string }>>>({});
  const test = useMutation(trpc.webhooks.test.mutationOptions());

  function onSave(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    setSaved(undefined);
    edit.mutate(Object.fromEntries(types.map((t) => [t.field, String(data.get(t.field) ?? "").trim()])));
  }

  function onTest(type: WebhookType) {
    test.mutate(
      { type },
      {
        onSuccess: (res) => setResults((r) => ({ ...r, [type]: { status: res.status, message: res.message } })),
        onSettled: () => void queryClient.invalidateQueries(trpc.webhooks.recentTests.queryFilter()),
      },
    );
  }

  if (config.isPending) return <Loading />;
  if (config.error) return <ErrorAlert error={config.error} />;
  return (
    <section className="card">
      <h2>URLs</h2>
      <p className="muted">Deixe em branco para desativar. Só endereços http(s) públicos são aceitos.</p>
      <form onSubmit={onSave}>
        {types.map((t) => {
          const result = results[t.type];
          const current = config.data.webhooks[t.field];
          return (
            <div key={t.type} className="row align-end">
              <Field label={t.label} hint={t.hint} className="grow">
                {(control) => <input {...control} name={t.field} type="url" defaultValue={current ?? ""} placeholder="https://seu-sistema.com.br/webhooks" />}
              </Field>
              <button type="button" className="btn" disabled={!current || test.isPending} onClick={() => onTest(t.type)} aria-label={`Testar ${t.label}`}>
                Testar
              </button>
              {result && (
                <span role="status" className={`badge ${result.status >= 200 && result.status < 300 ? "badge-delivery-sent" : "badge-delivery-failed"}`}>
                  {result.status === 0 ? "Sem resposta" : `HTTP ${result.status}`}
                </span>
              )}
            </div>
          );
        })}
        <button className="btn btn-primary" type="submit" disabled={edit.isPending}>
          {edit.isPending ? "Salvando…" : "Salvar URLs"}
        </button>
      </form>
      <ErrorAlert error={edit.error} />
      <ErrorAlert error={test.error} />
      {saved && (
        <p className="alert alert-success" role="status">
          {saved.length === 0 ? "Nada mudou." : `URLs salvas (${saved.length} alterada${saved.length > 1 ? "s" : ""}).`}
        </p>
      )}
    </section>
  );
}

function SecretCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const config = useQuery(trpc.webhooks.list.queryOptions());
  const rotate = useMutation(
    trpc.webhooks.rotateSecret.mutationOptions({ onSuccess: () => void queryClient.invalidateQueries(trpc.webhooks.list.queryFilter()) }),
  );
  if (!config.data) return null;
  return (
    <section className="card">
      <h2>Segredo de assinatura</h2>
      <p className="muted">
        Verifique cada envio com <code>new Webhook(segredo).verify(corpo, cabeçalhos)</code> do pacote <code>standardwebhooks</code>.
      </p>
      <SigningSecret label="Segredo de assinatura" secret={config.data.webhooks.signing_secret} rotate={() => rotate.mutateAsync()} />
    </section>
  );
}

type Delivery = RouterOutputs["webhooks"]["deliveries"][number];

function DeliveryLog() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [type, setType] = useState<WebhookType | "">("");
  const [state, setState] = useState<"" | "pending" | "delivered" | "failed" | "canceled">("");
  const deliveries = useQuery({
    ...trpc.webhooks.deliveries.queryOptions({ type: type || undefined, state: state || undefined, limit: 50 }),
    refetchInterval: 3000,
  });
  const tests = useQuery({ ...trpc.webhooks.recentTests.queryOptions(), refetchInterval: 10_000 });
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({ onSuccess: () => void queryClient.invalidateQueries(trpc.webhooks.deliveries.queryFilter()) }),
  );
  return (
    <section className="card">
      <h2>Entregas</h2>
      <p className="muted">
        Falhas são reenviadas após cerca de 5 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h e 24 h. Eventos de uma mesma campanha chegam em ordem.
      </p>
      <div className="row">
        <Field label="Tipo">
          {(control) => (
            <select {...control} value={type} onChange={(e) => setType(e.target.value as WebhookType | "")}>
              <option value="">Todos</option>
              {types.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Situação">
          {(control) => (
            <select {...control} value={state} onChange={(e) => setState(e.target.value as typeof state)}>
              <option value="">Todas</option>
              {Object.entries(stateLabel).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorAlert error={redeliver.error} />
      <QueryTable query={deliveries} empty="Nenhuma entrega ainda." columns={["Evento", "Tipo", "Situação", "Tentativas", "Criado em", null]}>
        {(rows) => rows.map((d) => <DeliveryRow key={d.id} delivery={d} onRedeliver={() => redeliver.mutate({ id: d.id })} busy={redeliver.isPending} />)}
      </QueryTable>
      {tests.data && tests.data.length > 0 && (
        <>
          <h3>Testes recentes</h3>
          <ul>
            {tests.data.map((t, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the recent tests are a read-only list redrawn whole; nothing in a row keeps state.
              <li key={i}>
                {formatDayTimeSeconds(t.at)} · {typeLabel[t.type] ?? t.type} · {t.status === 0 ? `sem resposta (${t.error ?? "—"})` : `HTTP ${t.status}`} ·{" "}
                {t.durationMs} ms
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function DeliveryRow({ delivery: d, onRedeliver, busy }: { delivery: Delivery; onRedeliver: () => void; busy: boolean }) {
  return (
    <tr>
      <td>
        <details>
          <summary>
            <code>{d.messageId}</code>
          </summary>
          <pre className="mono">{d.payload}</pre>
          <ol>
            {d.log.map((a, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a delivery's attempts only grow at the end; the position is the attempt.
              <li key={i}>
                {formatDayTimeSeconds(a.at)} · {a.status === 0 ? "sem resposta" : `HTTP ${a.status}`} · {a.durationMs} ms{a.error ? ` · ${a.error}` : ""}
              </li>
            ))}
          </ol>
        </details>
      </td>
      <td>{typeLabel[d.type] ?? d.type}</td>
      <td>
        <span className={`badge ${stateBadge[d.state] ?? ""}`}>{stateLabel[d.state] ?? d.state}</span>
        {d.state === "pending" && d.nextAttemptAt && <small className="muted"> próxima tentativa {formatDayTimeSeconds(d.nextAttemptAt)}</small>}
        {d.lastError && d.state !== "delivered" && <small className="muted"> · {d.lastError}</small>}
      </td>
      <td>{d.attempts}</td>
      <td>{formatDayTimeSeconds(d.createdAt)}</td>
      <td className="actions">
        {d.state !== "pending" && (
          <button type="button" className="btn btn-small" disabled={busy} onClick={onRedeliver} aria-label={`Reenviar ${d.messageId}`}>
            Reenviar
          </button>
        )}
      </td>
    </tr>
  );
}
