import { addDays } from "date-fns/addDays";
import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import { brasiliaTimeZone, formatBrasilia } from "../time/brasilia";
import { dayKeys, type Settings } from "../settings/schema";

type Schedule = Settings["sending_schedule"];

export interface Window {
  start: Date;
  end: Date;
}

/** Local (Brasília) calendar date of an instant, e.g. "2026-11-21". */
export const localDate = (at: Date) => formatBrasilia(at, "yyyy-MM-dd");

/** The windows of one local date as instants; `windows` overrides the day's start/end. */
function windowsOn(schedule: Schedule, date: string): Window[] {
  // ISO day of week: 1 = monday … 7 = sunday.
  const isoDay = Number(formatBrasilia(fromZonedTime(`${date}T12:00:00`, brasiliaTimeZone), "i"));
  const day = schedule.days[dayKeys[isoDay - 1]];
  if (!day?.enabled) return [];
  const spans = day.windows.length > 0 ? day.windows : [{ start: day.start, end: day.end }];
  return spans.map((w) => ({
    start: fromZonedTime(`${date}T${w.start}:00`, brasiliaTimeZone),
    end: fromZonedTime(`${date}T${w.end}:00`, brasiliaTimeZone),
  }));
}

export interface WindowState {
  /** The window `now` is in, if any. */
  current?: Window;
  /** The next window to open after `now` (within a week). */
  next?: Window;
  /** The end of the last window that closed at or before `now` (within a week). */
  lastEnd?: Date;
}

/** Where `now` stands in the weekly schedule (always "open" when the schedule is disabled). */
export function windowState(schedule: Schedule, now: Date): WindowState {
  if (!schedule.enabled) return { current: { start: new Date(0), end: new Date(8.64e15) } };
  const today = fromZonedTime(`${localDate(now)}T12:00:00`, brasiliaTimeZone);
  const all: Window[] = [];
  for (let offset = -7; offset <= 8; offset++) all.push(...windowsOn(schedule, localDate(addDays(today, offset))));
  const state: WindowState = {};
  for (const w of all) {
    if (w.start <= now && now < w.end) state.current = w;
    if (w.start > now && (!state.next || w.start < state.next.start)) state.next = w;
    if (w.end <= now && (!state.lastEnd || w.end > state.lastEnd)) state.lastEnd = w.end;
  }
  return state;
}
