"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Breadcrumb, DetailUnavailable, EmptyState, Loading, PageHeader } from "../../../_components/ui";
import { formatDateTime } from "../../../_lib/format";
import { useTRPC } from "../../../_lib/trpc";
import { Cronograma } from "../../acoes/cronograma";
import { MonitoringGroupForm } from "./monitoring-group-form";
import { RenameSegment } from "./rename-segment";

export function SegmentDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const segment = useQuery(trpc.segments.get.queryOptions({ id_segment: id }));
  const channels = useQuery(trpc.channels.list.queryOptions());
  const [search, setSearch] = useState("");

  if (segment.isPending) return <Loading />;
  if (segment.error) return <DetailUnavailable href="/segments" label="Segmentos" notFound="Segmento não encontrado" error={segment.error} />;

  const s = segment.data;
  const channelName = (cid: string) => channels.data?.find((c) => c.id_channel === cid)?.name ?? cid;
  const needle = search.trim().toLowerCase();
  const groups = s.groups.filter((g) => !needle || g.name.toLowerCase().includes(needle) || g.id_group.includes(needle));

  return (
    <>
      <Breadcrumb href="/segments" label="Segmentos" current={s.name} />
      <PageHeader
        title={s.name}
        description={
          <>
            {s.total_groups} {s.total_groups === 1 ? "grupo" : "grupos"} em {s.id_channel.map(channelName).join(", ")} · criado em{" "}
            {formatDateTime(s.created_at)}
          </>
        }
        actions={<RenameSegment id={s.id_segment} name={s.name} />}
      />

      <section className="card" aria-labelledby="monitoring-title">
        <h2 id="monitoring-title">Grupo de monitoramento</h2>
        <p className="muted">Recebe uma cópia de cada campanha enviada ao segmento, para você acompanhar os envios. Precisa estar fora do segmento.</p>
        <div className="monitoring-current" data-testid="monitoring-group">
          {s.monitoring_group ? (
            <p>
              Atual: <strong>{s.monitoring_group.name}</strong> no canal <strong>{s.monitoring_group.channel_name}</strong>{" "}
              <code className="muted">{s.monitoring_group.id_group}</code>
            </p>
          ) : (
            <p>Nenhum grupo de monitoramento configurado.</p>
          )}
        </div>
        <MonitoringGroupForm segment={s} channels={channels.data ?? []} />
      </section>

      <Cronograma target={{ id_segment: s.id_segment }} segmentId={s.id_segment} />

      <section className="card">
        <div className="row space-between">
          <h2>Grupos do segmento</h2>
          <label className="field search">
            <span className="sr-only">Buscar grupos do segmento</span>
            <input type="search" placeholder="Buscar por nome ou id" value={search} onChange={(e) => setSearch(e.target.value)} />
          </label>
        </div>
        {groups.length === 0 ? (
          <EmptyState>Nenhum grupo encontrado.</EmptyState>
        ) : (
          <table className="table" aria-label="Grupos do segmento">
            <thead>
              <tr>
                <th scope="col">Nome</th>
                <th scope="col">ID do grupo</th>
                <th scope="col">Canal</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={g.id_group}>
                  <td>{g.name}</td>
                  <td>
                    <code>{g.id_group}</code>
                  </td>
                  <td>{channelName(g.id_channel)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
