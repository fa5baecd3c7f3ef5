/**
 * When a series runs (docs/series.md), pure: its weekdays at its time in Brasília, from its creation up to and
 * including its `until` date. A series' next run is always the first one after now: occurrences that passed (a
 * server that was down, a paused series) are skipped, never caught up.
 */
import { addDays } from "date-fns/addDays";
import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import type { SeriesSchedule } from "../../db/schema";
import { dayKeys } from "../settings/schema";
import { brasiliaTimeZone, formatBrasilia } from "../time/brasilia";

const localDate = (at: Date) => formatBrasilia(at, "yyyy-MM-dd");
const noonOf = (date: string) => fromZonedTime(`${date}T12:00:00`, brasiliaTimeZone);

/** The run on a Brasília date, or null when the series does not run that day (weekday not chosen, after `until`). */
function runOn(schedule: SeriesSchedule, date: string): Date | null {
  if (date > schedule.until) return null;
  const isoDay = Number(formatBrasilia(noonOf(date), "i"));
  if (!schedule.days.includes(dayKeys[isoDay - 1])) return null;
  return fromZonedTime(`${date}T${schedule.time}:00`, brasiliaTimeZone);
}

/** The first run strictly after `after` (null: none left before `until`). */
export function nextRun(schedule: SeriesSchedule, after: Date): Date | null {
  const start = noonOf(localDate(after));
  // Eight days cover every weekday once past today; `until` ends the search earlier.
  for (let offset = 0; offset <= 8; offset++) {
    const date = localDate(addDays(start, offset));
    if (date > schedule.until) return null;
    const at = runOn(schedule, date);
    if (at && at > after) return at;
  }
  return null;
}
