"use client";

import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { EmptyState, ErrorAlert, Loading, PageHeader, StatusBadge } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";
import { nameMaxLength } from "../../../../server/text-limits";

export function NewSegment() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const channels = useQuery(trpc.channels.list.queryOptions());
  const [name, setName] = useState("");
  const [channelIds, setChannelIds] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [search, setSearch] = useState("");

  const groupQueries = useQueries({
    queries: channelIds.map((id) => trpc.channels.groups.queryOptions({ id_channel: id })),
  });
  const create = useMutation(
    trpc.segments.create.mutationOptions({
      onSuccess: async (s) => {
        await queryClient.invalidateQueries(trpc.segments.list.queryFilter());
        router.push(`/segments/${s.id_segment}`);
      },
    }),
  );

  const needle = search.trim().toLowerCase();
  const matches = (g: { id_group: string; name: string }) => !needle || g.name.toLowerCase().includes(needle) || g.id_group.includes(needle);
  // Groups of the chosen channels, in channel order then the platform's order.
  const available = channelIds.flatMap((_id, i) => groupQueries[i]?.data?.groups ?? []);
  const visible = available.filter(matches);
  const chosen = available.filter((g) => selected.has(g.id_group));
  const allVisibleSelected = visible.length > 0 && visible.every((g) => selected.has(g.id_group));

  function toggleChannel(id: string, on: boolean) {
    setChannelIds((ids) => (on ? [...ids, id] : ids.filter((x) => x !== id)));
  }
  function toggleGroup(id: string, on: boolean) {
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  }
  function toggleAllVisible(on: boolean) {
    setSelected((s) => {
      const next = new Set(s);
      for (const g of visible) {
        if (on) next.add(g.id_group);
        else next.delete(g.id_group);
      }
      return next;
    });
  }
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    // Only groups of channels still ticked are sent.
    create.mutate({ name: name.trim(), id_channel: channelIds, groups: chosen.map((g) => g.id_group) });
  }

  const connected = channels.data?.filter((c) => c.status === "connected") ?? [];
  return (
    <>
      <nav className="breadcrumb" aria-label="Trilha">
        <Link href="/segments">Segmentos</Link> / <span>Novo segmento</span>
      </nav>
      <PageHeader title="Novo segmento" description="Dê um nome, escolha os canais e marque os grupos que farão parte do segmento." />
      <form className="stack" onSubmit={onSubmit}>
        <section className="card">
          <h2>1. Nome</h2>
          <label className="field">
            <span>Nome do segmento</span>
            <input name="name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={nameMaxLength} placeholder="Ex.: Alunos turma 7" />
          </label>
        </section>

        <section className="card">
          <fieldset>
            <legend>
              <h2>2. Canais</h2>
            </legend>
            {channels.isPending ? (
              <Loading />
            ) : channels.error ? (
              <ErrorAlert error={channels.error} />
            ) : channels.data.length === 0 ? (
              <EmptyState>
                Você ainda não tem canais. <Link href="/channels">Crie um canal</Link> primeiro.
              </EmptyState>
            ) : (
              <ul className="check-list">
                {channels.data.map((c) => (
                  <li key={c.id_channel}>
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={channelIds.includes(c.id_channel)}
                        disabled={c.status !== "connected"}
                        onChange={(e) => toggleChannel(c.id_channel, e.target.checked)}
                      />
                      {c.name}
                    </label>{" "}
                    <StatusBadge status={c.status} />
                  </li>
                ))}
              </ul>
            )}
            {channels.data && connected.length < channels.data.length && (
              <p className="muted">Só canais conectados podem ser usados: os grupos dos demais não podem ser consultados agora.</p>
            )}
          </fieldset>
        </section>

        <section className="card">
          <div className="row space-between">
            <h2>3. Grupos</h2>
            <span className="muted" aria-live="polite">
              {chosen.length} {chosen.length === 1 ? "grupo selecionado" : "grupos selecionados"}
            </span>
          </div>
          {channelIds.length === 0 ? (
            <EmptyState>Escolha ao menos um canal para ver seus grupos.</EmptyState>
          ) : (
            <>
              <div className="row">
                <label className="field grow">
                  <span>Buscar grupos</span>
                  <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Nome ou id do grupo" />
                </label>
              </div>
              <label className="check select-all">
                <input type="checkbox" checked={allVisibleSelected} disabled={visible.length === 0} onChange={(e) => toggleAllVisible(e.target.checked)} />
                {needle ? "Selecionar todos os resultados" : "Selecionar todos"}
              </label>
              {channelIds.map((id, i) => {
                const channel = channels.data?.find((c) => c.id_channel === id);
                const q = groupQueries[i];
                const groups = q?.data?.groups.filter(matches) ?? [];
                return (
                  <fieldset key={id} className="group-set">
                    <legend>{channel?.name ?? id}</legend>
                    {!q || q.isPending ? (
                      <Loading label="Carregando grupos…" />
                    ) : q.error ? (
                      <ErrorAlert error={q.error} />
                    ) : groups.length === 0 ? (
                      <p className="muted">Nenhum grupo encontrado.</p>
                    ) : (
                      <ul className="check-grid">
                        {groups.map((g) => (
                          <li key={g.id_group}>
                            <label className="check" title={g.id_group}>
                              <input type="checkbox" checked={selected.has(g.id_group)} onChange={(e) => toggleGroup(g.id_group, e.target.checked)} />
                              {g.name}
                            </label>
                          </li>
                        ))}
                      </ul>
                    )}
                  </fieldset>
                );
              })}
            </>
          )}
        </section>

        <ErrorAlert error={create.error} />
        <div className="row">
          <button className="btn btn-primary" type="submit" disabled={create.isPending || chosen.length === 0 || !name.trim()}>
            {create.isPending ? "Criando…" : "Criar segmento"}
          </button>
          <Link href="/segments" className="btn btn-ghost">
            Cancelar
          </Link>
        </div>
      </form>
    </>
  );
}
