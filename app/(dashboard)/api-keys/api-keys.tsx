"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { CopyButton, CreateByNameForm, ErrorAlert, PageHeader, QueryTable } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { nameMaxLength } from "../../../server/text-limits";

type NewKey = RouterOutputs["apiKeys"]["create"];

export function ApiKeys() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  const [created, setCreated] = useState<NewKey>();
  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: (key) => {
        setCreated(key);
        void queryClient.invalidateQueries(trpc.apiKeys.list.queryFilter());
      },
    }),
  );

  return (
    <>
      <PageHeader
        title="Chaves de API"
        description={
          <>
            Use uma chave no cabeçalho <code>x-api-key</code> para chamar a API. Veja a <a href="/docs">referência da API</a>.
          </>
        }
      />

      {created && (
        <section className="card card-highlight" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Chave “{created.name}” criada</h2>
          <p className="alert alert-warning" role="note">
            Copie a chave agora: por segurança ela não será mostrada novamente.
          </p>
          <div className="field">
            <label htmlFor="new-api-key">Nova chave de API</label>
            <div className="row">
              <input id="new-api-key" className="mono grow" readOnly value={created.apiKey} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={created.apiKey} label="Copiar chave" />
            </div>
          </div>
          <button type="button" className="btn btn-ghost" onClick={() => setCreated(undefined)}>
            Já copiei, fechar
          </button>
        </section>
      )}

      <CreateByNameForm
        title="Nova chave"
        label="Nome da chave"
        placeholder="Ex.: Integração do CRM"
        maxLength={nameMaxLength}
        submitLabel="Criar chave"
        pending={create.isPending}
        error={create.error}
        onCreate={(name, done) => create.mutate({ name }, { onSuccess: done })}
      />

      <section className="card">
        <h2>Suas chaves</h2>
        <QueryTable query={keys} empty="Nenhuma chave ainda." columns={["Nome", "Prefixo", "Criada em", "Último uso", "Situação", null]}>
          {(rows) => rows.map((k) => <KeyRow key={k.id} apiKey={k} />)}
        </QueryTable>
      </section>
    </>
  );
}

function KeyRow({ apiKey: k }: { apiKey: RouterOutputs["apiKeys"]["list"][number] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const revoke = useMutation(
    trpc.apiKeys.revoke.mutationOptions({
      onSuccess: () => {
        setConfirming(false);
        void queryClient.invalidateQueries(trpc.apiKeys.list.queryFilter());
      },
    }),
  );
  return (
    <tr className={k.revokedAt ? "row-muted" : undefined}>
      <td>{k.name}</td>
      <td>
        <code>{k.prefix}…</code>
      </td>
      <td>{formatDateTime(k.createdAt)}</td>
      <td>{formatDateTime(k.lastUsedAt, "Nunca")}</td>
      <td>
        {k.revokedAt ? (
          <span className="badge badge-disconnected">Revogada em {formatDateTime(k.revokedAt)}</span>
        ) : (
          <span className="badge badge-connected">Ativa</span>
        )}
      </td>
      <td className="actions">
        {!k.revokedAt &&
          (confirming ? (
            <span className="row">
              <span>Revogar “{k.name}”? Integrações que a usam deixarão de funcionar.</span>
              <button type="button" className="btn btn-danger" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: k.id })}>
                Confirmar revogação
              </button>
              <button type="button" className="btn btn-ghost" onClick={() => setConfirming(false)}>
                Cancelar
              </button>
            </span>
          ) : (
            <button type="button" className="btn btn-ghost-danger" onClick={() => setConfirming(true)} aria-label={`Revogar a chave ${k.name}`}>
              Revogar
            </button>
          ))}
        <ErrorAlert error={revoke.error} />
      </td>
    </tr>
  );
}
