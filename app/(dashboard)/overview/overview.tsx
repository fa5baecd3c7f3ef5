"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ReactNode } from "react";
import type { OverviewAttention } from "../../../server/overview/schema";
import { HealthBadge, UsageMeter } from "../../_components/number-health";
import { CampaignStatusBadge, EmptyState, ErrorAlert, Loading, PageHeader, ProgressBar, StatusBadge } from "../../_components/ui";
import { formatDateTime, formatTime, healthStateAdvice, healthStateLabel, pauseReasonLabel } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { launchStatusLabel } from "../launches/labels";
import { DayPairs, HourBars } from "./charts";

type Data = RouterOutputs["overview"]["get"];

const webhookTypeLabel: Record<string, string> = {
  campaign_status: "Status da campanha",
  campaign_progress: "Progresso da campanha",
  channel_status: "Status do canal",
  group_activity: "Atividade dos grupos",
};

/** One line of "Precisa de atenção": what, where to fix it. */
function attentionLine(a: OverviewAttention): { title: string; text: string; href: string; action: string } {
  switch (a.kind) {
    case "number":
      return {
        title: `Número ${healthStateLabel[a.state]?.toLowerCase() ?? a.state}: ${a.name}`,
        text: `${healthStateAdvice[a.state] ?? ""}${a.detail ? ` Motivo: ${a.detail}.` : ""}`,
        href: `/channels/${a.id}`,
        action: "Ver canal",
      };
    case "channel_offline":
      return { title: `Canal desconectado: ${a.name}`, text: "Nada sai por ele até conectar de novo.", href: `/channels/${a.id}`, action: "Conectar" };
    case "campaign_paused":
      return {
        title: `Campanha pausada: ${a.name}`,
        text: `Pausada ${pauseReasonLabel[a.state] ?? a.state}.`,
        href: `/campaigns/${a.id}`,
        action: "Ver campanha",
      };
    case "webhooks_failing":
      return {
        title: `Webhooks falhando: ${webhookTypeLabel[a.state] ?? a.state}`,
        text: `${a.count} ${a.count === 1 ? "aviso não entregue" : "avisos não entregues"}${a.detail ? ` (${a.detail})` : ""}.`,
        href: "/webhooks",
        action: "Ver webhooks",
      };
    case "traffic_alert":
      return {
        title: `Cliques sem entradas: ${a.name}`,
        text: `${a.detail ?? ""} e ninguém entrou no grupo. Confira o convite do grupo atual e o anúncio.`,
        href: `/launches/${a.id}`,
        action: "Ver lançamento",
      };
  }
}

/** A list item's first line: its name, linking to its page, and its badges. */
function ItemHead({ href, name, children }: { href: string; name: string; children: ReactNode }) {
  return (
    <div className="number-head">
      <Link href={href} className="strong-link">
        {name}
      </Link>
      {children}
    </div>
  );
}

function Stat({ id, label, value }: { id: string; label: string; value: number }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd data-testid={`overview-${id}`}>{value}</dd>
    </div>
  );
}

export function Overview() {
  const trpc = useTRPC();
  const overview = useQuery(trpc.overview.get.queryOptions(undefined, { refetchInterval: 5000 }));
  return (
    <>
      <PageHeader title="Visão geral" description="O dia de hoje em todas as campanhas, números e lançamentos. Atualiza sozinha." />
      {overview.isPending ? <Loading /> : overview.error ? <ErrorAlert error={overview.error} /> : <OverviewBody data={overview.data} />}
    </>
  );
}

function OverviewBody({ data }: { data: Data }) {
  const clicks = data.launches.reduce((s, l) => s + l.clicks_today, 0);
  const joins = data.launches.reduce((s, l) => s + l.joins_today, 0);
  const currentHour = Number(formatTime(data.generated_at).slice(0, 2));
  return (
    <>
      <section className="card" aria-labelledby="attention-title">
        <h2 id="attention-title">Precisa de atenção</h2>
        {data.attention.length === 0 ? (
          <p className="muted" data-testid="attention-none">
            Nada precisa de atenção agora.
          </p>
        ) : (
          <ul className="attention-list" data-testid="attention">
            {data.attention.map((a) => {
              const line = attentionLine(a);
              return (
                <li key={`${a.kind}-${a.id}`} className={`attention attention-${a.kind}`} data-kind={a.kind}>
                  <div className="grow">
                    <strong>{line.title}</strong>
                    <p className="small muted">{line.text}</p>
                  </div>
                  <Link href={line.href} className="btn btn-small">
                    {line.action}
                  </Link>
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <dl className="stats overview-stats">
        <Stat id="sends-today" label="Envios hoje" value={data.sends_today.total} />
        <Stat id="active" label="Em andamento" value={data.campaigns.active.length} />
        <Stat id="clicks-today" label="Cliques hoje" value={clicks} />
        <Stat id="joins-today" label="Entradas hoje" value={joins} />
      </dl>

      <div className="overview-grid">
        <section className="card" aria-labelledby="sends-title">
          <h2 id="sends-title">Envios de hoje por hora</h2>
          <HourBars values={data.sends_today.by_hour} currentHour={currentHour} />
        </section>

        <section className="card" aria-labelledby="numbers-title">
          <h2 id="numbers-title">Números: envios de hoje e limite</h2>
          {data.numbers.length === 0 ? (
            <EmptyState>
              Nenhum canal ainda. <Link href="/channels">Conecte um número</Link>.
            </EmptyState>
          ) : (
            <ul className="number-list">
              {data.numbers.map((n) => (
                <li key={n.id_channel} className="number-row" data-testid={`overview-number-${n.id_channel}`}>
                  <ItemHead href={`/channels/${n.id_channel}`} name={n.name}>
                    <span className="number-badges">
                      {n.status !== "connected" && <StatusBadge status={n.status} />}
                      <HealthBadge health={{ state: n.health_state, until: n.health_until, reason: n.health_reason }} />
                    </span>
                  </ItemHead>
                  <UsageMeter label="Mensagens" used={n.sent_today} cap={n.daily_cap} />
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>

      <div className="overview-grid">
        <section className="card" aria-labelledby="active-title">
          <h2 id="active-title">Campanhas em andamento</h2>
          {data.campaigns.active.length === 0 ? (
            <p className="muted">Nenhuma campanha enviando agora.</p>
          ) : (
            <ul className="number-list" data-testid="overview-active">
              {data.campaigns.active.map((c) => (
                <li key={c.id_campaign} className="number-row">
                  <ItemHead href={`/campaigns/${c.id_campaign}`} name={c.name}>
                    <CampaignStatusBadge status={c.status} pauseReason={c.pause_reason} />
                  </ItemHead>
                  <div className="number-share">
                    <ProgressBar total={c.groups.total} sent={c.groups.sent} failed={c.groups.failed} label={`Progresso de ${c.name}`} />
                    <span className="number-counts small">
                      {c.groups.sent + c.groups.failed} de {c.groups.total} grupos
                    </span>
                  </div>
                </li>
              ))}
            </ul>
          )}
          <h3>Próximas agendadas</h3>
          {data.campaigns.scheduled.length === 0 ? (
            <p className="muted">Nenhuma campanha agendada.</p>
          ) : (
            <ul className="number-list" data-testid="overview-scheduled">
              {data.campaigns.scheduled.map((c) => (
                <li key={c.id_campaign} className="number-row number-head">
                  <Link href={`/campaigns/${c.id_campaign}`} className="strong-link">
                    {c.name}
                  </Link>
                  <span className="small muted">
                    {formatDateTime(c.scheduled_at)} · {c.groups.total} grupos
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>

        <section className="card" aria-labelledby="launches-title">
          <h2 id="launches-title">Lançamentos</h2>
          {data.launches.length === 0 ? (
            <p className="muted">
              Nenhum lançamento ativo. <Link href="/launches/new">Criar lançamento</Link>.
            </p>
          ) : (
            <ul className="number-list">
              {data.launches.map((l) => (
                <li key={l.id_launch} className="number-row" data-testid={`overview-launch-${l.id_launch}`}>
                  <ItemHead href={`/launches/${l.id_launch}`} name={l.name}>
                    <span className={`badge badge-launch-${l.status}`}>{launchStatusLabel[l.status] ?? l.status}</span>
                  </ItemHead>
                  <p className="launch-today small">
                    Hoje: <strong data-testid="launch-clicks-today">{l.clicks_today}</strong> cliques ·{" "}
                    <strong data-testid="launch-joins-today">{l.joins_today}</strong> entradas · {l.members} membros em {l.groups}{" "}
                    {l.groups === 1 ? "grupo" : "grupos"}
                  </p>
                  <DayPairs days={l.days} label={`${l.name}, últimos 7 dias`} />
                </li>
              ))}
            </ul>
          )}
          <p className="legend small">
            <span className="legend-dot clicks" /> cliques <span className="legend-dot joins" /> entradas (últimos 7 dias)
          </p>
        </section>
      </div>
    </>
  );
}
