import { fromZonedTime } from "date-fns-tz/fromZonedTime";
import { BadRequest } from "../errors";
import { brasiliaTimeZone, formatBrasilia } from "../time/brasilia";

const pattern = /^(\d{2})\/(\d{2})\/(\d{4}) - (\d{2}):(\d{2})$/;

/**
 * `DD/MM/YYYY - HH:mm` in Brasília time → an instant. Strictly in the future: a minute that has
 * already begun is past. Malformed, impossible (31/02) or past dates are a 400 naming the field.
 */
export function parseScheduledAt(value: string, now: Date, field = "scheduled_at"): Date {
  const m = pattern.exec(value.trim());
  if (!m) throw new BadRequest(`${field}: must have the format DD/MM/YYYY - HH:mm (Brasília time), e.g. 25/12/2026 - 09:30`);
  const [, dd, mm, yyyy, hh, mi] = m.map(Number);
  const valid = mm >= 1 && mm <= 12 && dd >= 1 && dd <= 31 && hh <= 23 && mi <= 59;
  const iso = `${m[3]}-${m[2]}-${m[1]}T${m[4]}:${m[5]}:00`;
  const at = valid ? fromZonedTime(iso, brasiliaTimeZone) : new Date(NaN);
  // A date that rolls over (31/02 → 03/03) does not read back as written.
  if (Number.isNaN(at.getTime()) || formatBrasilia(at, "dd/MM/yyyy - HH:mm") !== value.trim()) {
    throw new BadRequest(`${field}: ${value} is not a valid date and time`);
  }
  const minuteStart = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  if (at.getTime() <= minuteStart.getTime()) {
    throw new BadRequest(`${field}: must be in the future (Brasília time now: ${formatBrasilia(now, "dd/MM/yyyy - HH:mm")})`);
  }
  void yyyy;
  return at;
}
