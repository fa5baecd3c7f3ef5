"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { HealthBadge, UsageMeter } from "../../_components/number-health";
import { CreateByNameForm, ErrorAlert, PageHeader, QueryTable, StatusBadge } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { useCan } from "../role-context";
import { nameMaxLength } from "../../../server/text-limits";
import { numberHealthLimits } from "../../../server/settings/schema";

type Channel = RouterOutputs["channels"]["listAll"]["channels"][number];
type LimitField = keyof Channel["limits"];

export function Channels() {
  // Creating, renaming and limiting channels is an admin's (docs/team.md#roles); the server refuses it anyway.
  const canAdmin = useCan("admin");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const channels = useQuery(
    trpc.channels.listAll.queryOptions(undefined, {
      // A new channel pairs in the background: poll fast until none is still connecting; health and usage move on their own.
      refetchInterval: (q) => (q.state.data?.channels.some((c) => c.status === "connecting") ? 2000 : 10_000),
      select: (d) => d.channels,
    }),
  );
  const create = useMutation(
    trpc.channels.create.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.channels.listAll.queryFilter()),
    }),
  );

  return (
    <>
      <PageHeader title="Canais" description="Cada canal é uma conta de mensagens conectada; seus grupos ficam disponíveis para segmentos e campanhas." />

      {canAdmin && (
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
      )}

      <GatewayCheckCard />

      <section className="card">
        <h2>Seus canais</h2>
        <p className="muted small">
          Saúde do número e uso de hoje (dia de Brasília): mensagens enviadas e grupos criados, contra os limites de cada número (em Configurações, ou próprios
          do número em “Limites”).
        </p>
        <QueryTable query={channels} empty="Nenhum canal ainda. Crie o primeiro acima." columns={["Nome", "Número", "Situação", "Saúde", "Uso hoje", null]}>
          {(rows) => rows.map((c) => <ChannelRow key={c.id_channel} channel={c} canAdmin={canAdmin} />)}
        </QueryTable>
      </section>
    </>
  );
}

function ChannelRow({ channel: c, canAdmin }: { channel: Channel; canAdmin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [limitsOpen, setLimitsOpen] = useState(false);
  const rename = useMutation(
    trpc.channels.edit.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.channels.listAll.queryFilter());
        setEditing(false);
      },
    }),
  );

  function onRename(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    rename.mutate({ id_channel: c.id_channel, name: String(new FormData(e.currentTarget).get("name")).trim() });
  }

  return (
    <>
      <tr data-channel={c.id_channel}>
        <td className="channel-name">
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
          <div className="muted small">Criado em {formatDateTime(c.created_at)}</div>
        </td>
        <td className="nowrap">{c.phone ? `+${c.phone}` : "—"}</td>
        <td>
          <StatusBadge status={c.status} />
        </td>
        <td>
          <HealthBadge health={c.health} />
          {c.health.state === "warming" && c.health.warmup_day !== null && <div className="muted small">Dia {c.health.warmup_day} de aquecimento</div>}
        </td>
        <td className="usage-col" aria-label={`Uso de hoje do canal ${c.name}`}>
          <UsageMeter label="Mensagens" used={c.health.sent_today} cap={c.health.daily_cap} />
          <UsageMeter label="Grupos criados" used={c.health.groups_created_today} cap={c.health.group_create_cap} />
        </td>
        <td className="actions channel-actions">
          {canAdmin && !editing && (
            <button type="button" className="btn btn-ghost" onClick={() => setEditing(true)} aria-label={`Renomear o canal ${c.name}`}>
              Renomear
            </button>
          )}
          {canAdmin && (
            <button
              type="button"
              className="btn btn-ghost"
              aria-expanded={limitsOpen}
              onClick={() => setLimitsOpen(!limitsOpen)}
              aria-label={`Limites do canal ${c.name}`}
            >
              Limites
            </button>
          )}
          <Link href={`/channels/${c.id_channel}`} className="btn btn-ghost" aria-label={`Ver grupos do canal ${c.name}`}>
            Ver grupos
          </Link>
        </td>
      </tr>
      {canAdmin && limitsOpen && (
        <tr className="limits-row">
          <td colSpan={6}>
            <LimitsForm channel={c} onDone={() => setLimitsOpen(false)} />
          </td>
        </tr>
      )}
    </>
  );
}

const limitFields: { field: LimitField; label: string; unit: string }[] = [
  { field: "daily_message_cap", label: "Mensagens por dia", unit: "mensagens" },
  { field: "warmup_days", label: "Dias de aquecimento", unit: "dias" },
  { field: "warmup_first_day_cap", label: "Mensagens no 1º dia de aquecimento", unit: "mensagens" },
  { field: "min_send_gap_seconds", label: "Intervalo mínimo entre envios do número", unit: "segundos" },
  { field: "group_create_cap", label: "Grupos criados por dia", unit: "grupos" },
];

/** The channel's own budget: a value replaces the account's for this number; empty keeps the account's (shown as the placeholder). */
function LimitsForm({ channel: c, onDone }: { channel: Channel; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.settings.get.queryOptions());
  const save = useMutation(
    trpc.channels.edit.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.channels.listAll.queryFilter());
        onDone();
      },
    }),
  );
  const account = settings.data?.settings.number_health;

  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const limits = Object.fromEntries(
      limitFields.map(({ field }) => {
        const raw = String(form.get(field) ?? "").trim();
        return [field, raw === "" ? null : Number(raw)];
      }),
    ) as Channel["limits"];
    save.mutate({ id_channel: c.id_channel, name: c.name, limits });
  }

  return (
    <form className="limits-form" onSubmit={onSubmit} aria-label={`Limites do número ${c.name}`}>
      <p className="muted small">Vazio: vale o padrão da conta (Configurações › Saúde dos números).</p>
      <div className="form-grid three">
        {limitFields.map(({ field, label, unit }) => {
          const bounds = numberHealthLimits[field];
          const fallback = account?.[field];
          return (
            <label key={field} className="field">
              <span>{label}</span>
              <input
                name={field}
                type="number"
                min={bounds.min}
                max={bounds.max}
                step={field === "min_send_gap_seconds" ? "any" : 1}
                defaultValue={c.limits[field] ?? ""}
                placeholder={fallback === undefined ? "" : `padrão: ${fallback ?? "sem limite"}`}
              />
              <small className="muted">
                {unit}, de {bounds.min} a {bounds.max}
              </small>
            </label>
          );
        })}
      </div>
      <ErrorAlert error={save.error} />
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          Salvar limites
        </button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>
          Fechar
        </button>
      </div>
    </form>
  );
}

/**
 * The start-up check of the gateway (Evolution API only): whether it answered. Its version, warnings and the
 * prerequisites are the operator's (the server's log), never shown to an account.
 */
function GatewayCheckCard() {
  const trpc = useTRPC();
  const check = useQuery(trpc.channels.gatewayCheck.queryOptions());
  const c = check.data;
  if (!c) return null;
  return (
    <section className="card" aria-label="Gateway" data-testid="gateway-check">
      <h2>Gateway do WhatsApp</h2>
      <p>
        {c.reachable ? (
          <>Respondendo na última verificação ({formatDateTime(c.checkedAt)}).</>
        ) : (
          <strong className="text-danger">
            Gateway inacessível na última verificação ({formatDateTime(c.checkedAt)}): os números não pareiam nem enviam até ele voltar. O operador do serviço
            foi avisado no registro do servidor.
          </strong>
        )}
      </p>
    </section>
  );
}
