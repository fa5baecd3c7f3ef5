"use client";

import { useQuery } from "@tanstack/react-query";
import { useCan } from "../role-context";
import Link from "next/link";
import { EmptyState, ErrorAlert, Loading, PageHeader } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC } from "../../_lib/trpc";
import { launchStatusLabel } from "./labels";

export function Launches() {
  // A viewer reads only (docs/team.md#roles): no create button (the server refuses it anyway).
  const canEdit = useCan("editor");
  const trpc = useTRPC();
  const launches = useQuery(trpc.launches.list.queryOptions(undefined, { refetchInterval: 10_000 }));
  return (
    <>
      <PageHeader
        title="Lançamentos"
        description="Um link de entrada para anúncios e posts que enche seus grupos em ordem e cria novos conforme eles lotam."
        actions={
          canEdit && (
            <Link href="/launches/new" className="btn btn-primary">
              Novo lançamento
            </Link>
          )
        }
      />
      <section className="card">
        {launches.isPending ? (
          <Loading />
        ) : launches.error ? (
          <ErrorAlert error={launches.error} />
        ) : launches.data.launches.length === 0 ? (
          <EmptyState>
            Nenhum lançamento ainda. Crie um para ter um só link que leva cada pessoa ao grupo com vaga, criando grupos novos quando os anteriores enchem.{" "}
            <Link href="/launches/new">Criar o primeiro lançamento</Link>.
          </EmptyState>
        ) : (
          <table className="table" aria-label="Lançamentos">
            <thead>
              <tr>
                <th scope="col">Lançamento</th>
                <th scope="col">Link</th>
                <th scope="col">Situação</th>
                <th scope="col" className="num">
                  Grupos
                </th>
                <th scope="col" className="num">
                  Membros
                </th>
                <th scope="col" className="num">
                  Cliques
                </th>
                <th scope="col">Criado em</th>
              </tr>
            </thead>
            <tbody>
              {launches.data.launches.map((l) => (
                <tr key={l.id_launch}>
                  <td>
                    <Link href={`/launches/${l.id_launch}`} className="strong-link">
                      {l.name}
                    </Link>
                  </td>
                  <td>
                    <code className="small">{l.join_url}</code>
                  </td>
                  <td>
                    <span className={`badge badge-launch-${l.status}`}>{launchStatusLabel[l.status] ?? l.status}</span>
                  </td>
                  <td className="num">{l.groups}</td>
                  <td className="num">{l.members}</td>
                  <td className="num">{l.clicks}</td>
                  <td>{formatDateTime(l.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
