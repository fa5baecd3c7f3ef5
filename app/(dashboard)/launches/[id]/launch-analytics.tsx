"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorAlert, Loading } from "../../../_components/ui";
import { sinceLaunch } from "../../../_lib/brasilia-time";
import { useTRPC } from "../../../_lib/trpc";
import { BuyersByGroup } from "./buyers-by-group";
import { BySource, LaunchCharts } from "./launch-charts";
import { MembersExport } from "./members-export";
import { ByAd, SourcesPerDay } from "./utm-figures";

const periods = [7, 30, 90] as const;
/** As the launch's totals above: people join at any moment. */
const poll = 5000;

/** The launch's numbers per day, its clicks by source, and the participants' export. */
export function LaunchAnalytics({ id, createdAt }: { id: string; createdAt: string }) {
  const trpc = useTRPC();
  const [days, setDays] = useState<number>(30);
  const analytics = useQuery(trpc.launchStats.analytics.queryOptions({ id_launch: id, days }, { refetchInterval: poll }));
  return (
    <>
      <section className="card" aria-labelledby="days-title">
        <div className="row space-between wrap">
          <h2 id="days-title">Por dia</h2>
          <label className="field">
            <span className="sr-only">Período</span>
            <select value={days} onChange={(e) => setDays(Number(e.target.value))} aria-label="Período">
              {periods.map((p) => (
                <option key={p} value={p}>
                  Últimos {p} dias
                </option>
              ))}
            </select>
          </label>
        </div>
        {analytics.isPending ? (
          <Loading />
        ) : analytics.error ? (
          <ErrorAlert error={analytics.error} />
        ) : (
          <LaunchCharts days={sinceLaunch(analytics.data.days, createdAt)} />
        )}
      </section>

      <section className="card" aria-labelledby="sources-title">
        <h2 id="sources-title">Origem dos cliques</h2>
        {analytics.data && (
          <div className="stack">
            <SourcesPerDay dates={analytics.data.days.map((d) => d.date)} rows={analytics.data.by_source_day} />
            <BySource rows={analytics.data.by_source} />
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="ads-title">
        <h2 id="ads-title">Por anúncio</h2>
        <p className="muted">
          Cliques por utm_content (o anúncio) e utm_campaign, com a origem e a mídia; as 50 combinações com mais cliques, o resto em “(outros)”. Últimos 90 dias
          no máximo.
        </p>
        {analytics.data && <ByAd rows={analytics.data.by_utm} />}
      </section>

      <section className="card" aria-labelledby="buyers-title">
        <h2 id="buyers-title">Compradores por grupo</h2>
        <p className="muted">
          Compras aprovadas avisadas pelos webhooks das plataformas (Integrações), de leads e membros do lançamento; um reembolso ou chargeback tira o comprador
          da conta.
        </p>
        {analytics.data && <BuyersByGroup total={analytics.data.buyers} groups={analytics.data.groups} />}
      </section>

      <section className="card" aria-labelledby="members-title">
        <h2 id="members-title">Participantes</h2>
        <p className="muted">Cada entrada em um grupo do lançamento, com a data de saída quando houve; a equipe vem marcada.</p>
        <MembersExport id={id} />
      </section>
    </>
  );
}
