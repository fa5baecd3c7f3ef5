"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { CreateByNameForm, ErrorAlert, PageHeader, QueryTable, StatusBadge } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { nameMaxLength } from "../../../server/text-limits";

type Channel = RouterOutputs["channels"]["list"][number];

export function Channels() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const channels = useQuery(
    trpc.channels.list.queryOptions(undefined, {
      // A new channel pairs in the background: poll until none is still connecting.
      refetchInterval: (q) => (q.state.data?.some((c) => c.status === "connecting") ? 2000 : false),
    }),
  );
  const create = useMutation(
    trpc.channels.create.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.channels.list.queryFilter()),
    }),
  );

  return (
    <>
      <PageHeader title="Canais" description="Cada canal é uma conta de mensagens conectada; seus grupos ficam disponíveis para segmentos e campanhas." />

      <CreateByNameForm
        title="Novo canal"
        label="Nome do canal"
        placeholder="Ex.: Lançamento de março"
        maxLength={nameMaxLength}
        submitLabel="Criar canal"
        pending={create.isPending}
        error={create.error}
        onCreate={(name, done) => create.mutate({ name }, { onSuccess: done })}
      />

      <GatewayCheckCard />

      <section className="card">
        <h2>Seus canais</h2>
        <QueryTable query={channels} empty="Nenhum canal ainda. Crie o primeiro acima." columns={["Nome", "Situação", "Criado em", null]}>
          {(rows) => rows.map((c) => <ChannelRow key={c.id_channel} channel={c} />)}
        </QueryTable>
      </section>
    </>
  );
}

function ChannelRow({ channel: c }: { channel: Channel }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const rename = useMutation(
    trpc.channels.edit.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.channels.list.queryFilter());
        setEditing(false);
      },
    }),
  );

  function onRename(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    rename.mutate({ id_channel: c.id_channel, name: String(new FormData(e.currentTarget).get("name")).trim() });
  }

  return (
    <tr>
      <td>
        {editing ? (
          <form className="row" onSubmit={onRename}>
            <label className="sr-only" htmlFor={`rename-${c.id_channel}`}>
              Novo nome do canal {c.name}
            </label>
            <input id={`rename-${c.id_channel}`} name="name" defaultValue={c.name} required maxLength={nameMaxLength} autoFocus />
            <button type="submit" className="btn btn-primary" disabled={rename.isPending}>
              Salvar
            </button>
            <button
              type="button"
              className="btn btn-ghost"
              onClick={() => {
                rename.reset();
                setEditing(false);
              }}
            >
              Cancelar
            </button>
          </form>
        ) : (
          <Link href={`/channels/${c.id_channel}`} className="strong-link">
            {c.name}
          </Link>
        )}
        <ErrorAlert error={rename.error} />
      </td>
      <td>
        <StatusBadge status={c.status} />
      </td>
      <td>{formatDateTime(c.created_at)}</td>
      <td className="actions">
        {!editing && (
          <button type="button" className="btn btn-ghost" onClick={() => setEditing(true)} aria-label={`Renomear o canal ${c.name}`}>
            Renomear
          </button>
        )}
        <Link href={`/channels/${c.id_channel}`} className="btn btn-ghost" aria-label={`Ver grupos do canal ${c.name}`}>
          Ver grupos
        </Link>
      </td>
    </tr>
  );
}

/** The start-up check of the gateway (Evolution API only): its version, what is wrong, what to verify by hand. */
function GatewayCheckCard() {
  const trpc = useTRPC();
  const check = useQuery(trpc.channels.gatewayCheck.queryOptions());
  const c = check.data;
  if (!c) return null;
  return (
    <section className="card" aria-label="Gateway" data-testid="gateway-check">
      <h2>Gateway (Evolution API)</h2>
      <p>
        {c.reachable ? (
          <>
            Versão <strong>{c.version ?? "desconhecida"}</strong>, verificada em {formatDateTime(c.checkedAt)}.
          </>
        ) : (
          <strong className="text-danger">Gateway inacessível na última verificação ({formatDateTime(c.checkedAt)}).</strong>
        )}
      </p>
      {c.warnings.length > 0 && (
        <ul aria-label="Avisos do gateway">
          {c.warnings.map((w) => (
            <li key={w} className="text-danger">
              {w}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Pré-requisitos a conferir no gateway</summary>
        <ul>
          {c.reminders.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      </details>
    </section>
  );
}
