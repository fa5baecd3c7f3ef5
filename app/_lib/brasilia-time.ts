/**
 * The composer's schedule helpers. Campaign times are chosen and shown in Brasília time
 * (server/time/brasilia.ts), whatever the browser's own zone: the API takes `scheduled_at` as
 * "DD/MM/YYYY - HH:mm" in that zone.
 */
import { brasiliaParts } from "../../server/time/brasilia";

/** YYYY-MM-DD plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Date and time inputs (read as Brasília time) → the API's "DD/MM/YYYY - HH:mm". */
export function toScheduledAt(date: string, time: string): string {
  const [y, m, d] = date.split("-");
  return `${d}/${m}/${y} - ${time}`;
}

/** "DD/MM/YYYY às HH:mm", for people. */
export function describeSchedule(date: string, time: string): string {
  const [y, m, d] = date.split("-");
  return `${d}/${m}/${y} às ${time}`;
}

/** The API refuses a minute that has already begun: the chosen one must come after the current minute in Brasília. */
export function isFutureInBrasilia(date: string, time: string, now: Date): boolean {
  const current = brasiliaParts(now);
  return `${date}T${time}` > `${current.date}T${current.time}`;
}

/** A sensible default for "Agendar": about an hour from now, on a quarter hour. */
export function suggestedSchedule(now: Date): { date: string; time: string } {
  const quarter = 15 * 60_000;
  return brasiliaParts(new Date(Math.ceil((now.getTime() + 60 * 60_000) / quarter) * quarter));
}

/**
 * The period's days from the launch's own first day (Brasília) on: before it there was no launch, and the
 * members counted back from today would draw people in groups the launch did not have yet.
 */
export function sinceLaunch<T extends { date: string }>(days: T[], createdAt: string): T[] {
  const first = brasiliaParts(new Date(createdAt)).date;
  const kept = days.filter((d) => d.date >= first);
  return kept.length > 0 ? kept : days.slice(-1);
}
