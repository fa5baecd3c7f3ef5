/**
 * Brasília time (America/Sao_Paulo), the one zone of the product: `scheduled_at` is written in it,
 * answers give instants with its offset, sending windows are its days, and the dashboard shows and
 * picks times in it whatever the browser's own zone. Shared by the server and the dashboard, so it
 * imports nothing (the browser bundle takes it): Intl's time-zone data only.
 */
export const brasiliaTimeZone = "America/Sao_Paulo";

const partsFormat = new Intl.DateTimeFormat("en-CA", {
  timeZone: brasiliaTimeZone,
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});

/** An instant as the date (YYYY-MM-DD, as <input type="date"> holds it) and time (HH:mm) on a clock in Brasília. */
export function brasiliaParts(instant: Date): { date: string; time: string } {
  // The wall clock is the instant shifted by the quarter's cached offset: Intl only once per quarter hour (the send
  // loop reads the day of every claim; formatToParts costs a tenth of a millisecond). Years Date prints in 4 digits only.
  const local = new Date(instant.getTime() + brasiliaOffsetMs(instant));
  const year = local.getUTCFullYear();
  if (year < 1 || year > 9999) return intlParts(instant);
  const iso = local.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 16) };
}

function intlParts(instant: Date): { date: string; time: string } {
  const p = Object.fromEntries(partsFormat.formatToParts(instant).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}` };
}

const offsetName = new Intl.DateTimeFormat("en-US", { timeZone: brasiliaTimeZone, timeZoneName: "longOffset" });

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

/** The patterns the server writes Brasília dates in: `i` is the ISO weekday, 1 (Monday) to 7 (Sunday). */
export type BrasiliaPattern = "yyyy-MM-dd" | "dd/MM/yyyy" | "dd/MM/yyyy - HH:mm" | "i";

/**
 * `formatInTimeZone(d, brasiliaTimeZone, pattern)` of date-fns-tz for the patterns the server uses, from the offset
 * above: date-fns' `format` (with its locale) was about 90 ms of every test file's imports (docs/testing.md, "Where CI
 * time goes"). An invalid date throws a RangeError, as date-fns' does.
 */
export function formatBrasilia(d: Date, pattern: BrasiliaPattern): string {
  const iso = toBrasiliaIso(d);
  const [date, time] = [iso.slice(0, 10), iso.slice(11, 16)];
  if (pattern === "yyyy-MM-dd") return date;
  if (pattern === "i") return String(new Date(`${date}T00:00:00Z`).getUTCDay() || 7);
  const day = `${date.slice(8, 10)}/${date.slice(5, 7)}/${date.slice(0, 4)}`;
  return pattern === "dd/MM/yyyy" ? day : `${day} - ${time}`;
}
