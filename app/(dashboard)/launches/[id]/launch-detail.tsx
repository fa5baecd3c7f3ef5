"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Breadcrumb, DetailUnavailable, Loading, PageHeader } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";
import { Cronograma } from "../../acoes/cronograma";
import { launchStatusLabel } from "../labels";
import { AddGroups } from "./add-groups";
import { BuyersInGroupsCard } from "./buyers-in-groups";
import { GroupBars } from "./group-bars";
import { JoinLink } from "./join-link";
import { LaunchActions } from "./launch-actions";
import { LaunchAnalytics } from "./launch-analytics";
import { LeadsPanel } from "./leads-panel";
import { MetaPanel } from "./meta-panel";
import { ModerationCard } from "./moderation-card";

/** People join through the link at any moment: the page follows them. */
const poll = 5000;

export function LaunchDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const info = useQuery(
    trpc.launches.info.queryOptions(
      { id_launch: id },
      { refetchInterval: poll, retry: (n, err) => err.data?.httpStatus !== 404 && err.data?.httpStatus !== 400 && n < 2 },
    ),
  );

  if (info.isPending) return <Loading />;
  if (info.error) return <DetailUnavailable href="/launches" label="Lançamentos" notFound="Lançamento não encontrado" error={info.error} />;

  const l = info.data;
  const t = l.totals;
  return (
    <>
      <Breadcrumb href="/launches" label="Lançamentos" current={l.name} />
      <PageHeader
        title={l.name}
        description={
          <span className="header-meta">
            <span className={`badge badge-launch-${l.status}`} data-testid="launch-status">
              {launchStatusLabel[l.status] ?? l.status}
            </span>
            <span>
              Segmento <Link href={`/segments/${l.id_segment}`}>{l.name}</Link>
            </span>
            <Link href={`/campaigns/new?segment=${encodeURIComponent(l.id_segment)}`}>Enviar campanha aos grupos</Link>
          </span>
        }
        actions={<LaunchActions id={l.id_launch} status={l.status} closedUrl={l.closed_url} />}
      />

      {l.traffic_alert && (
        <div className="alert alert-warning" role="alert" data-testid="traffic-alert">
          <strong>Cliques sem entradas.</strong> {l.traffic_alert.clicks} cliques em {l.traffic_alert.minutes} min e ninguém entrou no grupo. Confira se o
          convite do grupo atual abre e se o anúncio leva ao link certo.
        </div>
      )}

      <section className="card" aria-labelledby="totals-title">
        <div className="row space-between wrap">
          <h2 id="totals-title">Resultados</h2>
          {l.current_group ? (
            <span className="muted" data-testid="current-group">
              O link leva agora ao grupo <strong>#{l.current_group.position}</strong> {l.current_group.name}
            </span>
          ) : (
            <span className="alert alert-warning" data-testid="current-group">
              Nenhum grupo com vaga: o link mostra a página de grupos fechados.
            </span>
          )}
        </div>
        <dl className="stats" aria-label="Totais do lançamento">
          <Stat label="Cliques" value={t.clicks} id="clicks" />
          <Stat label="Cliques únicos" value={t.unique_clicks} id="unique-clicks" />
          <Stat label="Entradas" value={t.joins} id="joins" tone="sent" />
          <Stat label="Saídas" value={t.leaves} id="leaves" tone={t.leaves > 0 ? "failed" : undefined} />
          <Stat label="Membros" value={t.members} id="members" />
          <Stat label="Pessoas únicas" value={t.unique_members} id="unique-members" />
          <Stat label="Grupos" value={t.groups} id="groups" />
        </dl>
        <p className="muted small">
          Entradas, saídas e pessoas únicas contam só leads: a equipe, os administradores e os números dos canais ficam de fora. Membros conta todos nos grupos.{" "}
          <span className="live">Atualizando a cada 5 s.</span>
        </p>
      </section>

      <section className="card" aria-labelledby="groups-title">
        <h2 id="groups-title">Grupos</h2>
        {l.groups.length === 0 ? (
          <p className="muted">Nenhum grupo ainda. Crie ou adote grupos abaixo.</p>
        ) : (
          <GroupBars groups={l.groups} capacity={l.capacity} margin={l.margin} currentGroup={l.current_group?.id_group} />
        )}
        <AddGroups id={l.id_launch} channelIds={l.id_channel} inLaunch={l.groups.map((g) => g.id_group)} />
      </section>

      <Cronograma target={{ id_launch: l.id_launch }} segmentId={l.id_segment} />

      {/* What a team watches live comes first (on a phone, the first screen); the link and its QR code are set up once. */}
      <section className="card" aria-labelledby="link-title">
        <h2 id="link-title">Link de entrada</h2>
        <JoinLink url={l.join_url} slug={l.slug} />
      </section>

      <LeadsPanel id={l.id_launch} leads={t.leads} joined={t.leads_joined} />

      <BuyersInGroupsCard id={l.id_launch} buyers={l.buyers} removed={t.buyers_removed} />

      <ModerationCard id={l.id_launch} moderation={l.moderation} groups={l.groups} />

      <LaunchAnalytics id={l.id_launch} createdAt={l.created_at} />

      <MetaPanel id={l.id_launch} meta={l.tracking.meta} />
    </>
  );
}

function Stat({ label, value, id, tone }: { label: string; value: number; id: string; tone?: "sent" | "failed" }) {
  return (
    <div className={tone ? `stat stat-${tone}` : "stat"}>
      <dt>{label}</dt>
      <dd data-testid={`total-${id}`}>{value}</dd>
    </div>
  );
}
