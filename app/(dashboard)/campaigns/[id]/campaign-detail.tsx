"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Breadcrumb, CampaignStatusBadge, DetailUnavailable, ErrorAlert, Loading, PageHeader, ProgressBar } from "../../../_components/ui";
import { deliveryStateLabel, formatDateTime, formatDayTimeSeconds, formatTime, isActiveCampaign, messageTypeLabel } from "../../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../../_lib/trpc";
import { CampaignActions } from "./campaign-actions";
import { CampaignNumbers } from "./campaign-numbers";
import { DeliveriesTable } from "./deliveries-table";
import { PollResults } from "./poll-results";

const poll = 2000;

export function CampaignDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const info = useQuery(
    trpc.campaigns.info.queryOptions(
      { id_campaign: id },
      {
        // A poll's votes keep arriving after the last group got it: its page keeps polling while votes are reported.
        refetchInterval: (q) => (q.state.data && (isActiveCampaign(q.state.data.status) || q.state.data.poll?.votes_available) ? poll : false),
        retry: (n, err) => err.data?.httpStatus !== 404 && err.data?.httpStatus !== 400 && n < 2,
      },
    ),
  );
  const active = info.data ? isActiveCampaign(info.data.status) : false;
  const deliveries = useQuery(
    trpc.campaigns.deliveries.queryOptions(
      { id_campaign: id },
      {
        enabled: !!info.data,
        // Also after the campaign finished, until the rows caught up with it (the last poll may predate the last send).
        refetchInterval: (q) =>
          active || (info.data?.status === "completed" && q.state.data?.some((d) => d.state === "pending" || d.state === "sending")) ? poll : false,
      },
    ),
  );

  if (info.isPending) return <Loading />;
  if (info.error) return <DetailUnavailable href="/campaigns" label="Campanhas" notFound="Campanha não encontrada" error={info.error} />;

  const c = info.data;
  const { total, sent, pending, failed } = c.groups;
  return (
    <>
      <Breadcrumb href="/campaigns" label="Campanhas" current={c.name} />
      <PageHeader
        title={c.name}
        description={
          <span className="header-meta">
            <span data-testid="campaign-status">
              <CampaignStatusBadge status={c.status} pauseReason={c.pause_reason} />
            </span>
            <span>{messageTypeLabel[c.message_type] ?? c.message_type}</span>
            <span>
              Segmento <Link href={`/segments/${c.id_segment}`}>{c.segment_name}</Link>
            </span>
          </span>
        }
        actions={<CampaignActions id={c.id_campaign} name={c.name} status={c.status} />}
      />

      <section className="card" aria-labelledby="progress-title">
        <div className="row space-between wrap">
          <h2 id="progress-title">Progresso</h2>
          <p className="muted schedule-line" data-testid="campaign-schedule">
            {c.scheduled_at ? (
              <>
                Agendada para <strong>{formatDateTime(c.scheduled_at)}</strong> (horário de Brasília)
              </>
            ) : (
              <>Envio imediato</>
            )}{" "}
            · criada em {formatDateTime(c.created_at)}
          </p>
        </div>
        <dl className="stats" aria-label="Contadores">
          <Stat label="Total" value={total} />
          <Stat label="Enviados" value={sent} tone="sent" />
          <Stat label="Pendentes" value={pending} />
          <Stat label="Falhas" value={failed} tone={failed > 0 ? "failed" : undefined} />
        </dl>
        <ProgressBar total={total} sent={sent} failed={failed} />
        <EtaLine status={c.status} eta={c.eta} />
        {c.id_series && (
          <p className="muted small" data-testid="campaign-series">
            Envio de uma série (campanha repetida). <Link href="/campaigns#series">Ver séries</Link>
          </p>
        )}
        {!c.reads_available && (
          // Not 0 reads: the platform never tells (Evolution API does not forward group receipts).
          <p className="muted small" data-testid="reads-unavailable">
            Leituras indisponíveis neste provedor: o gateway não informa quando mensagens de grupo são lidas.
          </p>
        )}
        {c.monitoring_group && <MonitoringLine copy={c.monitoring_group} name={deliveries.data?.find((d) => d.monitoring)?.name} />}
        <p className="muted small legend">
          <span className="legend-dot sent" /> enviados <span className="legend-dot failed" /> falhas <span className="legend-dot rest" /> pendentes
          {active && <span className="live"> · atualizando a cada 2 s</span>}
        </p>
      </section>

      {c.poll && (
        <section className="card" aria-labelledby="poll-title">
          <h2 id="poll-title">Resultado da enquete</h2>
          <PollResults poll={c.poll} live={c.poll.votes_available} />
        </section>
      )}

      {c.channels.length > 0 && (
        <section className="card" aria-labelledby="numbers-title">
          <h2 id="numbers-title">Números</h2>
          <p className="muted small">
            Cada grupo sai por um dos números do segmento que estão nele. Um número que não pode enviar agora é pulado, e os grupos pendentes dele vão pelos
            outros números do grupo.
          </p>
          <CampaignNumbers
            shares={c.channels}
            total={total}
            active={active}
            stalled={c.status === "paused" && (c.pause_reason === "channel_offline" || c.pause_reason === "channel_limits")}
            poll={poll}
          />
        </section>
      )}

      <section className="card">
        <h2>Entregas por grupo</h2>
        {deliveries.isPending ? (
          <Loading label="Carregando entregas…" />
        ) : deliveries.error ? (
          <ErrorAlert error={deliveries.error} />
        ) : (
          // The monitoring copy is shown apart (above), not among the campaign's groups.
          <DeliveriesTable
            deliveries={deliveries.data.filter((d) => !d.monitoring)}
            sending={c.status === "sending"}
            campaignId={c.id_campaign}
            readsAvailable={c.reads_available}
          />
        )}
      </section>
    </>
  );
}

function Stat({ label, value, tone }: { label: string; value: number; tone?: "sent" | "failed" }) {
  return (
    <div className={tone ? `stat stat-${tone}` : "stat"}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

type MonitoringCopy = NonNullable<RouterOutputs["campaigns"]["info"]["monitoring_group"]>;

/** The monitoring group's copy: sent first, before any group, and not one of the campaign's groups. */
function MonitoringLine({ copy, name }: { copy: MonitoringCopy; name?: string }) {
  const state =
    copy.status === "sent" ? (
      <>
        enviado às <strong title={formatDayTimeSeconds(copy.sent_at)}>{formatTime(copy.sent_at)}</strong>
      </>
    ) : copy.status === "failed" ? (
      <strong className="text-danger">falhou</strong>
    ) : (
      <>{(deliveryStateLabel[copy.status] ?? copy.status).toLowerCase()} (vai antes de todos os grupos)</>
    );
  return (
    <p className="muted monitoring-line" data-testid="monitoring-group">
      <span className="badge badge-info">Monitoramento</span> Grupo de monitoramento{name ? ` (${name})` : ""}: {state}
      <span className="small"> · cópia fora da contagem de grupos</span>
    </p>
  );
}

/** info-campaign's `eta` (Previsão de término): recomputed on every poll while the campaign can move. */
function EtaLine({ status, eta }: { status: string; eta: string | null }) {
  const finished = status === "completed" || status === "failed";
  if (status === "canceled") return null;
  return (
    <p className="muted eta-line" data-testid="campaign-eta">
      {finished ? "Terminou em " : "Previsão de término: "}
      {eta ? <strong>{formatDateTime(eta)}</strong> : <span>indisponível (pausada ou sem número que possa enviar)</span>}
      {!finished && eta && <span className="small"> (horário de Brasília; pelo ritmo, janelas de envio e limites dos números)</span>}
    </p>
  );
}
