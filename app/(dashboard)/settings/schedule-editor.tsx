"use client";

import { dayKeys, dayLabel, settingsLimits, type DayKey, type Settings } from "./settings-fields";

type Days = Settings["sending_schedule"]["days"];
type Day = Days[DayKey];
type Interval = { start: string; end: string };

/** A day's sending hours as a list: start–end alone, or its windows when it has several. */
const intervalsOf = (day: Day): Interval[] => (day.windows.length ? day.windows : [{ start: day.start, end: day.end }]);

function plusMinutes(time: string, minutes: number): string {
  const [h, m] = time.split(":").map(Number);
  const total = Math.min(23 * 60 + 59, h * 60 + m + minutes);
  return `${String(Math.floor(total / 60)).padStart(2, "0")}:${String(total % 60).padStart(2, "0")}`;
}

/**
 * One row per day: on/off, its hours, and more windows when one stretch is not enough
 * (e.g. 08:00–12:00 and 14:00–18:00). Several windows replace the day's start–end, as the API says.
 */
export function ScheduleEditor({ days, onChange, invalid }: { days: Days; onChange: (days: Days) => void; invalid: (path: string) => boolean }) {
  const setDay = (key: DayKey, day: Day) => onChange({ ...days, [key]: day });

  function setInterval(key: DayKey, i: number, field: keyof Interval, value: string) {
    const day = days[key];
    if (!day.windows.length) return setDay(key, { ...day, [field]: value });
    setDay(key, { ...day, windows: day.windows.map((w, j) => (j === i ? { ...w, [field]: value } : w)) });
  }
  function addWindow(key: DayKey) {
    const day = days[key];
    const current = intervalsOf(day);
    const last = current[current.length - 1];
    setDay(key, { ...day, windows: [...current, { start: last.end, end: plusMinutes(last.end, 120) }] });
  }
  function removeWindow(key: DayKey, i: number) {
    const day = days[key];
    const windows = day.windows.filter((_, j) => j !== i);
    // Back to a single stretch: it becomes the day's start–end.
    setDay(key, windows.length === 1 ? { ...day, start: windows[0].start, end: windows[0].end, windows: [] } : { ...day, windows });
  }

  return (
    <table className="table schedule-table" aria-label="Horário semanal">
      <thead>
        <tr>
          <th scope="col">Dia</th>
          <th scope="col">Horários de envio (Brasília)</th>
          <th scope="col">
            <span className="sr-only">Ações</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {dayKeys.map((key) => {
          const day = days[key];
          const name = dayLabel[key].toLowerCase();
          const base = `sending_schedule.days.${key}`;
          const intervals = intervalsOf(day);
          const several = day.windows.length > 0;
          return (
            <tr key={key} className={day.enabled ? undefined : "row-muted"} data-testid={`day-${key}`}>
              <td>
                <label className="check toggle">
                  <input type="checkbox" checked={day.enabled} onChange={(e) => setDay(key, { ...day, enabled: e.target.checked })} />
                  {dayLabel[key]}
                </label>
                {!day.enabled && <div className="muted small">sem envios</div>}
              </td>
              <td>
                <ul className="intervals">
                  {intervals.map((w, i) => {
                    const path = several ? `${base}.windows.${i}` : base;
                    const bad = several ? invalid(path) : (f: string) => invalid(`${base}.${f}`);
                    const badStart = typeof bad === "boolean" ? bad : bad("start");
                    const badEnd = typeof bad === "boolean" ? bad : bad("end");
                    const which = several ? ` da janela ${i + 1}` : "";
                    return (
                      // biome-ignore lint/suspicious/noArrayIndexKey: a day's windows have no id; the position is the window being edited.
                      <li key={i} className="row">
                        <input
                          type="time"
                          aria-label={`Início${which} de ${name}`}
                          value={w.start}
                          required
                          aria-invalid={badStart || undefined}
                          onChange={(e) => setInterval(key, i, "start", e.target.value)}
                        />
                        <span className="muted">até</span>
                        <input
                          type="time"
                          aria-label={`Fim${which} de ${name}`}
                          value={w.end}
                          required
                          aria-invalid={badEnd || undefined}
                          onChange={(e) => setInterval(key, i, "end", e.target.value)}
                        />
                        {several && (
                          <button
                            type="button"
                            className="btn btn-ghost-danger btn-small"
                            onClick={() => removeWindow(key, i)}
                            aria-label={`Remover a janela ${i + 1} de ${name}`}
                          >
                            Remover
                          </button>
                        )}
                      </li>
                    );
                  })}
                </ul>
              </td>
              <td className="actions">
                <button
                  type="button"
                  className="btn btn-small"
                  onClick={() => addWindow(key)}
                  aria-label={`Adicionar janela a ${name}`}
                  disabled={day.windows.length >= settingsLimits.windowsPerDay}
                >
                  + Janela
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
