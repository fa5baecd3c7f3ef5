"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { UtmRow } from "../../../../server/launches/funnel/utm-figures";

const palette = ["#2f6fd6", "#127a5a", "#c0362c", "#b7791f", "#6b46c1", "#2c7a7b", "#d53f8c", "#4a5568", "#8fb3ee", "#68d391"];
const noSource = "Sem origem";
const tag = (v: string | null) => v ?? <span className="muted">—</span>;
const dayLabel = (date: string) => `${date.slice(8, 10)}/${date.slice(5, 7)}`;

/** Clicks per ad: `utm_content` first, then its campaign, source and medium (launch-analytics' by_utm). */
export function ByAd({ rows }: { rows: UtmRow[] }) {
  if (rows.length === 0) return <p className="muted">Nenhum clique no período.</p>;
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Cliques por anúncio">
        <thead>
          <tr>
            <th scope="col">Anúncio (utm_content)</th>
            <th scope="col">Campanha (utm_campaign)</th>
            <th scope="col">Origem</th>
            <th scope="col">Mídia</th>
            <th scope="col" className="num">
              Cliques
            </th>
            <th scope="col" className="num">
              Cliques únicos
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={[r.utm_content, r.utm_campaign, r.utm_source, r.utm_medium].join("\n")} data-testid="ad-row">
              <td>{tag(r.utm_content)}</td>
              <td>{tag(r.utm_campaign)}</td>
              <td>{tag(r.utm_source)}</td>
              <td>{tag(r.utm_medium)}</td>
              <td className="num">{r.clicks}</td>
              <td className="num">{r.unique_clicks}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Clicks per source per day, stacked (launch-analytics' by_source_day over its days). */
export function SourcesPerDay({ dates, rows }: { dates: string[]; rows: { date: string; utm_source: string | null; clicks: number }[] }) {
  // Most clicks first: the legend reads like the table under it.
  const totals = new Map<string, number>();
  for (const r of rows) totals.set(r.utm_source ?? noSource, (totals.get(r.utm_source ?? noSource) ?? 0) + r.clicks);
  const sources = [...totals.keys()].sort((a, b) => (totals.get(b) ?? 0) - (totals.get(a) ?? 0) || a.localeCompare(b));
  const data = dates.map((date) => {
    const point: Record<string, string | number> = { day: dayLabel(date) };
    for (const s of sources) point[s] = 0;
    for (const r of rows) if (r.date === date) point[r.utm_source ?? noSource] = r.clicks;
    return point;
  });
  return (
    <figure className="chart" aria-label="Cliques por origem por dia" data-testid="sources-per-day">
      <figcaption>Cliques por origem por dia</figcaption>
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="day" fontSize={12} />
          <YAxis allowDecimals={false} fontSize={12} />
          <Tooltip />
          <Legend />
          {sources.map((s, i) => (
            <Bar key={s} dataKey={s} name={s} stackId="sources" fill={palette[i % palette.length]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
