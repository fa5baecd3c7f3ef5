"use client";

import { Field } from "../../../_components/ui";
import { addDays } from "../../../_lib/brasilia-time";
import { brasiliaParts } from "../../../../server/time/brasilia";

export const weekdays = [
  ["monday", "Seg"],
  ["tuesday", "Ter"],
  ["wednesday", "Qua"],
  ["thursday", "Qui"],
  ["friday", "Sex"],
  ["saturday", "Sáb"],
  ["sunday", "Dom"],
] as const;
export type Weekday = (typeof weekdays)[number][0];

/** The composer's "Repetir" choice (API `repeat`, docs/series.md): weekdays, time and last date, all in Brasília time. */
export interface RepeatDraft {
  days: Weekday[];
  time: string;
  /** YYYY-MM-DD, as <input type="date"> holds it. */
  until: string;
}

export function defaultRepeat(now: Date): RepeatDraft {
  const today = brasiliaParts(now).date;
  return { days: ["monday", "tuesday", "wednesday", "thursday", "friday"], time: "19:00", until: addDays(today, 14) };
}

/** The API's `repeat` object. */
export function toRepeat(r: RepeatDraft) {
  const [y, m, d] = r.until.split("-");
  return { days: weekdays.map(([k]) => k).filter((k) => r.days.includes(k)), time: r.time, until: `${d}/${m}/${y}` };
}

export function RepeatFields({ value, onChange }: { value: RepeatDraft; onChange: (r: RepeatDraft) => void }) {
  const toggle = (day: Weekday, on: boolean) => onChange({ ...value, days: on ? [...value.days, day] : value.days.filter((d) => d !== day) });
  return (
    <div className="schedule" data-testid="repeat-fields">
      <fieldset>
        <legend className="small">Dias da semana</legend>
        <div className="row wrap">
          {weekdays.map(([key, label]) => (
            <label key={key} className="check">
              <input type="checkbox" name={`repeat-${key}`} checked={value.days.includes(key)} onChange={(e) => toggle(key, e.target.checked)} />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="row align-end wrap">
        <Field label="Hora">
          {(c) => <input {...c} type="time" value={value.time} onChange={(e) => onChange({ ...value, time: e.target.value })} required />}
        </Field>
        <Field label="Até (último dia)">
          {(c) => (
            <input
              {...c}
              type="date"
              value={value.until}
              min={brasiliaParts(new Date()).date}
              onChange={(e) => onChange({ ...value, until: e.target.value })}
              required
            />
          )}
        </Field>
        <span className="badge badge-tz">Horário de Brasília</span>
      </div>
      {value.days.length === 0 ? (
        <p className="alert alert-error" role="alert">
          Escolha pelo menos um dia.
        </p>
      ) : (
        <p className="muted small">Cada envio vira uma campanha própria, com seus números. Pause, retome ou encerre a série em Campanhas › Séries.</p>
      )}
    </div>
  );
}
