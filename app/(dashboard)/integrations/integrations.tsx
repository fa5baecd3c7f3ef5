"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { EmptyState, ErrorAlert, Field, Loading, PageHeader } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC } from "../../_lib/trpc";

/** Names of credential fields as the marketplaces' own panels call them. */
const fieldLabels: Record<string, string> = {
  client_id: "Client ID",
  client_secret: "Client Secret",
  basic_token: "Token Basic",
  hottok: "Hottok (autentica o webhook de vendas)",
  webhook_token: "Token do webhook (autentica o webhook de vendas)",
  account_id: "ID da conta",
  email: "E-mail da conta",
  public_key: "Public key",
  api_key: "API key",
  consumer_key: "Chave de API (X_CONSUMER_KEY)",
  api_token: "Token de API",
};

type TypeInfo = {
  type: "hotmart" | "kiwify" | "eduzz" | "monetizze" | "braip";
  label: string;
  required: string[];
  optional: string[];
  webhook_url: string | null;
};

/** Where each accepted marketplace's webhook is registered and which credential authenticates it (docs/integrations.md). */
const webhookHelp: Record<string, string> = {
  hotmart:
    "Cadastre esta URL na Hotmart (Ferramentas → Webhook), versão 2.0.0, com os eventos de compra aprovada, completa, reembolsada e chargeback, " +
    "e salve aqui o Hottok da aba Autenticação.",
  kiwify: "Cadastre esta URL num webhook da Kiwify (Apps → Webhooks) e salve aqui o token desse webhook: ele assina cada envio.",
};

/**
 * Marketplace credentials. Values are write-only: once saved they are encrypted and the page only
 * shows which fields are set. Editing a field replaces it; empty fields are left as they are.
 */
export function Integrations() {
  const trpc = useTRPC();
  const query = useQuery(trpc.integrations.list.queryOptions());
  const [editing, setEditing] = useState<string | null>(null);

  if (query.isPending) return <Loading />;
  if (query.error) return <ErrorAlert error={query.error} />;
  const { integrations, types } = query.data;
  const configured = new Map(integrations.map((i) => [i.id_integration, i]));

  return (
    <>
      <PageHeader
        title="Integrações"
        description={
          "Credenciais das plataformas de venda. Ficam criptografadas; depois de salvas, nenhum valor volta a ser exibido. " +
          "Cada plataforma confirmada tem uma URL de webhook de vendas: as compras e reembolsos que ela avisa viram os compradores dos lançamentos."
        }
      />
      {integrations.length === 0 && <EmptyState>Nenhuma integração configurada ainda.</EmptyState>}
      <RotateHooksToken />
      {types.map((t) => {
        const current = configured.get(t.type);
        return (
          <section key={t.type} className="card" aria-label={t.label}>
            <div className="row space-between">
              <h2>
                {current ? current.label : t.label}{" "}
                {current ? <span className="badge badge-connected">configurada</span> : <span className="badge">não configurada</span>}
              </h2>
              {editing !== t.type && (
                <button type="button" className="btn" onClick={() => setEditing(t.type)}>
                  {current ? "Editar credenciais" : "Configurar"}
                </button>
              )}
            </div>
            <WebhookUrl info={t} />
            {current && (
              <ul className="check-list" aria-label={`Campos de ${t.label}`}>
                {Object.entries(current.fields).map(([field, set]) => (
                  <li key={field}>
                    {fieldLabels[field] ?? field}: {set ? "✓ definido" : "— vazio"}
                  </li>
                ))}
                <li className="muted">Atualizada em {formatDateTime(current.updated_at)}</li>
              </ul>
            )}
            {editing === t.type && <IntegrationForm info={t} exists={Boolean(current)} onDone={() => setEditing(null)} />}
          </section>
        );
      })}
    </>
  );
}

/** A new token in every sales-webhook URL (rotate-hooks-token): the old URLs stop working at once. */
function RotateHooksToken() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const rotate = useMutation(
    trpc.integrations.rotateHooksToken.mutationOptions({
      onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.integrations.list.queryKey() }),
    }),
  );
  return (
    <section className="card" aria-label="URLs dos webhooks de vendas">
      <p className="muted">
        Se uma URL de webhook de vendas vazou, gere novas: as antigas deixam de funcionar na hora, e cada plataforma precisa receber a nova URL.
      </p>
      {rotate.error && <ErrorAlert error={rotate.error} />}
      {rotate.isSuccess && <p role="status">Novas URLs geradas: cadastre-as em cada plataforma.</p>}
      <button
        type="button"
        className="btn btn-ghost"
        disabled={rotate.isPending}
        onClick={() => {
          if (window.confirm("Gerar novas URLs de webhook de vendas? As URLs atuais param de funcionar imediatamente.")) rotate.mutate({});
        }}
      >
        Gerar novas URLs de webhook
      </button>
    </section>
  );
}

/** The inbound webhook (buyers of the launches): the URL to copy, or why there is none. */
function WebhookUrl({ info }: { info: TypeInfo }) {
  if (!info.webhook_url) {
    return (
      <p className="muted">
        Webhook de vendas: ainda não disponível — o formato e a autenticação dos avisos da {info.label} não puderam ser confirmados na documentação.
      </p>
    );
  }
  return (
    <div className="stack">
      <Field label="URL do webhook de vendas (compradores dos lançamentos)" hint={webhookHelp[info.type]}>
        {(control) => <input {...control} readOnly value={info.webhook_url ?? ""} onFocus={(e) => e.currentTarget.select()} />}
      </Field>
    </div>
  );
}

function IntegrationForm({ info, exists, onDone }: { info: TypeInfo; exists: boolean; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [label, setLabel] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const done = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.integrations.list.queryKey() });
    onDone();
  };
  const create = useMutation(trpc.integrations.createFromDashboard.mutationOptions({ onSuccess: done }));
  const edit = useMutation(trpc.integrations.edit.mutationOptions({ onSuccess: done }));
  const remove = useMutation(trpc.integrations.delete.mutationOptions({ onSuccess: done }));
  const error = create.error ?? edit.error ?? remove.error;

  function submit(e: FormEvent) {
    e.preventDefault();
    const credentials = Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== ""));
    if (exists) edit.mutate({ type: info.type, label: label.trim() || undefined, credentials });
    else create.mutate({ type: info.type, label: label.trim() || undefined, credentials });
  }

  return (
    <form className="stack" onSubmit={submit} autoComplete="off">
      <Field label="Nome (opcional)">
        {(control) => <input {...control} value={label} onChange={(e) => setLabel(e.target.value)} placeholder={info.label} />}
      </Field>
      {[...info.required, ...info.optional].map((field) => (
        <Field
          key={field}
          label={fieldLabels[field] ?? field}
          hint={exists ? "Deixe em branco para manter o valor salvo." : info.required.includes(field) ? "Obrigatório." : undefined}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              value={values[field] ?? ""}
              onChange={(e) => setValues({ ...values, [field]: e.target.value })}
              required={!exists && info.required.includes(field)}
            />
          )}
        </Field>
      ))}
      {error && <ErrorAlert error={error} />}
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={create.isPending || edit.isPending}>
          Salvar
        </button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>
          Cancelar
        </button>
        {exists && (
          <button
            type="button"
            className="btn btn-ghost-danger"
            onClick={() => {
              if (window.confirm(`Remover a integração ${info.label}? As credenciais salvas são apagadas.`)) remove.mutate({ type: info.type });
            }}
          >
            Remover
          </button>
        )}
      </div>
    </form>
  );
}
