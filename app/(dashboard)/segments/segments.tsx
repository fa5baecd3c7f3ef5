"use client";

import { useQuery } from "@tanstack/react-query";
import { useCan } from "../role-context";
import Link from "next/link";
import { EmptyState, ErrorAlert, Loading, PageHeader } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC } from "../../_lib/trpc";

export function Segments() {
  // A viewer reads only (docs/team.md#roles): no create button (the server refuses it anyway).
  const canEdit = useCan("editor");
  const trpc = useTRPC();
  const segments = useQuery(trpc.segments.list.queryOptions());
  return (
    <>
      <PageHeader
        title="Segmentos"
        description="Um segmento é uma lista de grupos que recebe as mesmas campanhas."
        actions={
          canEdit && (
            <Link href="/segments/new" className="btn btn-primary">
              Novo segmento
            </Link>
          )
        }
      />
      <section className="card">
        {segments.isPending ? (
          <Loading />
        ) : segments.error ? (
          <ErrorAlert error={segments.error} />
        ) : segments.data.length === 0 ? (
          <EmptyState>
            Nenhum segmento ainda. <Link href="/segments/new">Crie o primeiro</Link>.
          </EmptyState>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Nome</th>
                <th scope="col" className="num">
                  Grupos
                </th>
                <th scope="col">Grupo de monitoramento</th>
                <th scope="col">Criado em</th>
              </tr>
            </thead>
            <tbody>
              {segments.data.map((s) => (
                <tr key={s.id_segment}>
                  <td>
                    <Link href={`/segments/${s.id_segment}`} className="strong-link">
                      {s.name}
                    </Link>
                  </td>
                  <td className="num">{s.total_groups}</td>
                  <td>
                    {s.monitoring_group ? (
                      <>
                        {s.monitoring_group.name} <span className="muted">({s.monitoring_group.channel_name})</span>
                      </>
                    ) : (
                      <span className="muted">Não configurado</span>
                    )}
                  </td>
                  <td>{formatDateTime(s.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
