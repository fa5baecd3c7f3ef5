import { formatInTimeZone, fromZonedTime } from "date-fns-tz";
import { BadRequest } from "../errors";

export const brasilia = "America/Sao_Paulo";

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
  const at = valid ? fromZonedTime(iso, brasilia) : new Date(NaN);
  // A date that rolls over (31/02 → 03/03) does not read back as written.
  if (Number.isNaN(at.getTime()) || formatInTimeZone(at, brasilia, "dd/MM/yyyy - HH:mm") !== value.trim()) {
    throw new BadRequest(`${field}: ${value} is not a valid date and time`);
  }
  const minuteStart = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  if (at.getTime() <= minuteStart.getTime()) {
    throw new BadRequest(`${field}: must be in the future (Brasília time now: ${formatInTimeZone(now, brasilia, "dd/MM/yyyy - HH:mm")})`);
  }
  void yyyy;
  return at;
}

const offsetName = new Intl.DateTimeFormat("en-US", { timeZone: brasilia, timeZoneName: "longOffset" });

/** Brasília's UTC offset at `at`, in ms, from the runtime's time-zone data ("GMT-03:00"; "GMT" is zero). */
function offsetAt(at: Date): number {
  const name = offsetName.formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /^GMT([+-])(\d{2}):(\d{2})$/.exec(name);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
}

/**
 * Brasília's UTC offset (ms) by quarter hour. Every time-zone transition falls on a quarter hour, so
 * the offset at a quarter's start holds for the whole quarter. formatInTimeZone asks Intl for it on
 * every call, a tenth of a millisecond each: info-campaign formats two dates per request.
 */
const offsetByQuarter = new Map<number, number>();
function brasiliaOffsetMs(d: Date): number {
  const quarter = Math.floor(d.getTime() / 900_000);
  let offset = offsetByQuarter.get(quarter);
  if (offset === undefined) {
    offset = offsetAt(new Date(quarter * 900_000));
    if (offsetByQuarter.size >= 10_000) offsetByQuarter.clear();
    offsetByQuarter.set(quarter, offset);
  }
  return offset;
}

const two = (n: number) => String(n).padStart(2, "0");

/** ISO 8601 with the Brasília offset (`yyyy-MM-dd'T'HH:mm:ssXXX`), as responses give it. */
export function toBrasiliaIso(d: Date): string {
  const offset = brasiliaOffsetMs(d);
  const local = new Date(d.getTime() + offset).toISOString().slice(0, 19);
  if (offset === 0) return `${local}Z`;
  const minutes = Math.abs(offset) / 60_000;
  return `${local}${offset < 0 ? "-" : "+"}${two(Math.floor(minutes / 60))}:${two(minutes % 60)}`;
}
