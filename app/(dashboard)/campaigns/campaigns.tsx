"use client";

import { useQuery } from "@tanstack/react-query";
import { useCan } from "../role-context";
import Link from "next/link";
import { CampaignStatusBadge, EmptyState, ErrorAlert, Loading, PageHeader, ProgressBar } from "../../_components/ui";
import { formatDateTime, isActiveCampaign, messageTypeLabel } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { SeriesList } from "./series-list";

type Campaign = RouterOutputs["campaigns"]["list"][number];

export function Campaigns() {
  // A viewer reads only (docs/team.md#roles): no create button (the server refuses it anyway).
  const canEdit = useCan("editor");
  const trpc = useTRPC();
  const campaigns = useQuery(
    trpc.campaigns.list.queryOptions(undefined, {
      // Live progress while anything can still move; a finished list stays still.
      refetchInterval: (q) => (q.state.data?.some((c) => isActiveCampaign(c.status)) ? 2000 : false),
    }),
  );
  return (
    <>
      <PageHeader
        title="Campanhas"
        description="Mensagens enviadas aos grupos de um segmento, agora ou na data agendada."
        actions={
          canEdit && (
            <Link href="/campaigns/new" className="btn btn-primary">
              Nova campanha
            </Link>
          )
        }
      />
      <section className="card">
        {campaigns.isPending ? (
          <Loading />
        ) : campaigns.error ? (
          <ErrorAlert error={campaigns.error} />
        ) : campaigns.data.length === 0 ? (
          <EmptyState>
            Nenhuma campanha ainda. <Link href="/campaigns/new">Crie a primeira</Link>.
          </EmptyState>
        ) : (
          <table className="table" aria-label="Campanhas">
            <thead>
              <tr>
                <th scope="col">Campanha</th>
                <th scope="col">Segmento</th>
                <th scope="col">Situação</th>
                <th scope="col" className="progress-col">
                  Progresso
                </th>
                <th scope="col">Envio</th>
              </tr>
            </thead>
            <tbody>
              {campaigns.data.map((c) => (
                <CampaignRow key={c.id_campaign} campaign={c} />
              ))}
            </tbody>
          </table>
        )}
      </section>
      <SeriesList />
    </>
  );
}

function CampaignRow({ campaign: c }: { campaign: Campaign }) {
  const { total, sent, failed } = c.groups;
  return (
    <tr>
      <td>
        <Link href={`/campaigns/${c.id_campaign}`} className="strong-link">
          {c.name}
        </Link>
        <div className="muted small">
          {messageTypeLabel[c.message_type] ?? c.message_type}
          {c.id_series && " · envio de série"}
        </div>
      </td>
      <td>{c.segment_name}</td>
      <td>
        <CampaignStatusBadge status={c.status} pauseReason={c.pause_reason} />
      </td>
      <td className="progress-col">
        <ProgressBar total={total} sent={sent} failed={failed} label={`Progresso de ${c.name}`} />
        <div className="muted small">
          {sent} de {total} enviados
          {failed > 0 && (
            <span className="text-danger">
              {" "}
              · {failed} {failed === 1 ? "falha" : "falhas"}
            </span>
          )}
        </div>
      </td>
      <td className="nowrap">
        {c.scheduled_at ? (
          <>
            {formatDateTime(c.scheduled_at)}
            <div className="muted small">agendada (Brasília)</div>
          </>
        ) : (
          <>
            {formatDateTime(c.created_at)}
            <div className="muted small">envio imediato</div>
          </>
        )}
      </td>
    </tr>
  );
}
