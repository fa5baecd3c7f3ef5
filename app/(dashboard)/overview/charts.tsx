/**
 * The overview's small charts, plain HTML and CSS (no chart library): bars whose heights are shares of
 * the largest value, each with its number in a title, and the whole chart named for screen readers.
 */

/** Today's sends per Brasília hour, 0–23; the hours still to come are dimmed. */
export function HourBars({ values, currentHour }: { values: number[]; currentHour: number }) {
  const top = Math.max(1, ...values);
  const busiest = values.indexOf(Math.max(...values));
  const total = values.reduce((a, b) => a + b, 0);
  return (
    <figure
      className="mini-chart"
      aria-label={`Envios por hora hoje: ${total} no total${total ? `, mais às ${busiest}h (${values[busiest]})` : ""}`}
      role="img"
    >
      <div className="hour-bars">
        {values.map((v, hour) => (
          <span
            // biome-ignore lint/suspicious/noArrayIndexKey: the hour is the key.
            key={hour}
            className={hour > currentHour ? "hour-bar later" : "hour-bar"}
            style={{ height: `${Math.max(v ? 6 : 2, (v / top) * 100)}%` }}
            title={`${String(hour).padStart(2, "0")}h: ${v}`}
          />
        ))}
      </div>
      <div className="hour-axis" aria-hidden="true">
        <span>0h</span>
        <span>6h</span>
        <span>12h</span>
        <span>18h</span>
        <span>23h</span>
      </div>
    </figure>
  );
}

/** A launch's last days: clicks and joins side by side per day, oldest first. */
export function DayPairs({ days, label }: { days: { date: string; clicks: number; joins: number }[]; label: string }) {
  const top = Math.max(1, ...days.map((d) => Math.max(d.clicks, d.joins)));
  const summary = days.map((d) => `${d.date.slice(8, 10)}/${d.date.slice(5, 7)}: ${d.clicks} cliques, ${d.joins} entradas`).join("; ");
  return (
    <figure className="mini-chart" role="img" aria-label={`${label}: ${summary}`}>
      <div className="day-pairs">
        {days.map((d) => (
          <span key={d.date} className="day-pair" title={`${d.date.slice(8, 10)}/${d.date.slice(5, 7)}: ${d.clicks} cliques, ${d.joins} entradas`}>
            <span className="day-bar clicks" style={{ height: `${(d.clicks / top) * 100}%` }} />
            <span className="day-bar joins" style={{ height: `${(d.joins / top) * 100}%` }} />
          </span>
        ))}
      </div>
    </figure>
  );
}
