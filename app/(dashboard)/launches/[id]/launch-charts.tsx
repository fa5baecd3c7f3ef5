"use client";

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export interface LaunchDay {
  date: string;
  clicks: number;
  unique_clicks: number;
  joins: number;
  leaves: number;
  members: number;
}

const colors = { clicks: "#2f6fd6", unique: "#8fb3ee", joins: "#127a5a", leaves: "#c0362c", members: "#127a5a" };

/** `2026-06-15` → `15/06`: the days of one chart are at most a year apart. */
const dayLabel = (date: string) => `${date.slice(8, 10)}/${date.slice(5, 7)}`;

/**
 * Per day (Brasília): clicks on the link, people who joined and left, and the members at the end of
 * the day. The numbers are also in a table under the charts, for screen readers and for copying.
 */
export function LaunchCharts({ days }: { days: LaunchDay[] }) {
  const data = days.map((d) => ({ ...d, day: dayLabel(d.date) }));
  return (
    <div className="stack">
      <div className="chart-grid">
        <figure className="chart" aria-label="Cliques, entradas e saídas por dia">
          <figcaption>Cliques, entradas e saídas por dia</figcaption>
          <ResponsiveContainer width="100%" height={240}>
            <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="day" fontSize={12} />
              <YAxis allowDecimals={false} fontSize={12} />
              <Tooltip />
              <Legend />
              <Bar dataKey="clicks" name="Cliques" fill={colors.clicks} isAnimationActive={false} />
              <Bar dataKey="unique_clicks" name="Cliques únicos" fill={colors.unique} isAnimationActive={false} />
              <Bar dataKey="joins" name="Entradas" fill={colors.joins} isAnimationActive={false} />
              <Bar dataKey="leaves" name="Saídas" fill={colors.leaves} isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </figure>
        <figure className="chart" aria-label="Membros no fim de cada dia">
          <figcaption>Membros no fim de cada dia</figcaption>
          <ResponsiveContainer width="100%" height={240}>
            <LineChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="day" fontSize={12} />
              <YAxis allowDecimals={false} fontSize={12} />
              <Tooltip />
              <Line type="monotone" dataKey="members" name="Membros" stroke={colors.members} strokeWidth={2} dot={false} isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
        </figure>
      </div>
      <details>
        <summary>Ver os números por dia</summary>
        <div className="table-scroll">
          <table className="table" aria-label="Números por dia">
            <thead>
              <tr>
                <th scope="col">Dia</th>
                <th scope="col" className="num">
                  Cliques
                </th>
                <th scope="col" className="num">
                  Cliques únicos
                </th>
                <th scope="col" className="num">
                  Entradas
                </th>
                <th scope="col" className="num">
                  Saídas
                </th>
                <th scope="col" className="num">
                  Membros
                </th>
              </tr>
            </thead>
            <tbody>
              {[...days].reverse().map((d) => (
                <tr key={d.date} data-testid={`day-${d.date}`}>
                  <td>{dayLabel(d.date)}</td>
                  <td className="num">{d.clicks}</td>
                  <td className="num">{d.unique_clicks}</td>
                  <td className="num">{d.joins}</td>
                  <td className="num">{d.leaves}</td>
                  <td className="num">{d.members}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}

/** Clicks by `utm_source`; clicks without one are "Sem origem". */
export function BySource({ rows }: { rows: { utm_source: string | null; clicks: number }[] }) {
  if (rows.length === 0) return <p className="muted">Nenhum clique no período.</p>;
  const total = rows.reduce((n, r) => n + r.clicks, 0);
  return (
    <table className="table" aria-label="Cliques por origem">
      <thead>
        <tr>
          <th scope="col">Origem (utm_source)</th>
          <th scope="col" className="num">
            Cliques
          </th>
          <th scope="col" className="num">
            %
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.utm_source ?? ""}>
            <td>{r.utm_source ?? <span className="muted">Sem origem</span>}</td>
            <td className="num">{r.clicks}</td>
            <td className="num">{total > 0 ? Math.round((r.clicks / total) * 100) : 0}%</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
