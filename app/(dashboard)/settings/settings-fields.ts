/**
 * The settings form's bookkeeping: what changed (the partial patch settings.edit wants), the
 * Portuguese name of each dotted field, and the server's validation errors read back per field.
 */
import { TRPCClientError } from "@trpc/client";
import { dayKeys, settingsLimits, type DayKey, type Settings, type SettingsPatch } from "@/server/settings/schema";

export { dayKeys, settingsLimits, type DayKey, type Settings };

export const dayLabel: Record<DayKey, string> = {
  monday: "Segunda-feira",
  tuesday: "Terça-feira",
  wednesday: "Quarta-feira",
  thursday: "Quinta-feira",
  friday: "Sexta-feira",
  saturday: "Sábado",
  sunday: "Domingo",
};

const fieldLabel: Record<string, string> = {
  "dispatch_rates.min_dispatch_rate": "Pausa mínima entre envios",
  "dispatch_rates.max_dispatch_rate": "Pausa máxima entre envios",
  "dispatch_rates.dispatches_per_loop": "Envios por ciclo",
  "dispatch_rates.min_campaign_interval": "Intervalo mínimo entre campanhas",
  "dispatch_rates.max_campaign_interval": "Intervalo máximo entre campanhas",
  "preferences.link_preview_mode": "Prévia de links",
  "preferences.link_preview_type": "Tamanho da prévia",
  "preferences.forward_message_enabled": "Encaminhar mensagens",
  "queue.concurrent_mode": "Fila de campanhas",
  "number_health.daily_message_cap": "Mensagens por dia por número",
  "number_health.warmup_days": "Dias de aquecimento",
  "number_health.warmup_first_day_cap": "Mensagens no 1º dia de aquecimento",
  "number_health.min_send_gap_seconds": "Intervalo mínimo entre envios de um número",
  "number_health.group_create_cap": "Grupos criados por dia por número",
  test_groups: "Grupos de teste",
  "sending_schedule.enabled": "Restringir ao horário de envio",
  "sending_schedule.finish_queued_on_end": "Terminar campanhas em andamento",
  "sending_schedule.finish_queued_mode": "Até quando terminar",
  "sending_schedule.cancel_outside_hours": "Cancelar campanhas fora do horário",
  "sending_schedule.cancel_mode": "Quando cancelar",
};

const dayFieldLabel: Record<string, string> = { enabled: "ativo", start: "início", end: "fim", windows: "janelas" };

/** "sending_schedule.days.monday.windows.1.start" → "Segunda-feira: janela 2, início". */
export function labelFor(path: string): string {
  if (fieldLabel[path]) return fieldLabel[path];
  const m = /^sending_schedule\.days\.(\w+)(?:\.(\w+))?(?:\.(\d+))?(?:\.(\w+))?$/.exec(path);
  if (m && m[1] in dayLabel) {
    const day = dayLabel[m[1] as DayKey];
    if (!m[2]) return day;
    if (m[2] === "windows" && m[3] !== undefined) return `${day}: janela ${Number(m[3]) + 1}${m[4] ? `, ${dayFieldLabel[m[4]] ?? m[4]}` : ""}`;
    return `${day}: ${dayFieldLabel[m[2]] ?? m[2]}`;
  }
  return path;
}

const byStart = (a: { start: string }, b: { start: string }) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0);

/** Only the fields whose value differs from the saved settings (a day's windows count as one field, sent sorted). */
export function buildPatch(saved: Settings, draft: Settings): SettingsPatch {
  const patch: Record<string, Record<string, unknown>> = {};
  const put = (section: string, key: string, value: unknown) => {
    patch[section] ??= {};
    patch[section][key] = value;
  };
  for (const section of ["dispatch_rates", "preferences", "queue", "number_health"] as const) {
    const before = saved[section] as Record<string, unknown>;
    const after = draft[section] as Record<string, unknown>;
    for (const key of Object.keys(after)) if (!Object.is(after[key], before[key])) put(section, key, after[key]);
  }
  const { days: savedDays, ...savedSchedule } = saved.sending_schedule;
  const { days: draftDays, ...draftSchedule } = draft.sending_schedule;
  for (const [key, value] of Object.entries(draftSchedule)) {
    if (value !== savedSchedule[key as keyof typeof savedSchedule]) put("sending_schedule", key, value);
  }
  const days: Record<string, Record<string, unknown>> = {};
  for (const day of dayKeys) {
    const before = savedDays[day];
    const after = draftDays[day];
    const changes: Record<string, unknown> = {};
    if (after.enabled !== before.enabled) changes.enabled = after.enabled;
    if (after.start !== before.start) changes.start = after.start;
    if (after.end !== before.end) changes.end = after.end;
    const windows = [...after.windows].sort(byStart);
    if (JSON.stringify(windows) !== JSON.stringify(before.windows)) changes.windows = windows;
    if (Object.keys(changes).length) days[day] = changes;
  }
  if (Object.keys(days).length) put("sending_schedule", "days", days);
  const withTestGroups = JSON.stringify(draft.test_groups) === JSON.stringify(saved.test_groups) ? {} : { test_groups: draft.test_groups };
  return { ...patch, ...withTestGroups } as SettingsPatch;
}

export interface FieldError {
  path: string;
  message: string;
}

/**
 * settings.edit answers "path: message; path: message" for rules across fields, and a JSON list of
 * zod issues for malformed input. Either way: one entry per field, the message in Portuguese when known.
 */
export function fieldErrors(error: unknown): FieldError[] {
  if (!(error instanceof TRPCClientError) || !error.data) return [];
  const text = error.message;
  let raw: FieldError[] = [];
  if (text.startsWith("[")) {
    try {
      raw = (JSON.parse(text) as { path?: (string | number)[]; message?: string }[]).map((i) => ({ path: (i.path ?? []).join("."), message: i.message ?? "" }));
    } catch {
      raw = [];
    }
  } else {
    const starts = [...text.matchAll(/(?:^|; )([a-z_]+(?:\.[a-z0-9_]+)+): /g)];
    raw = starts.map((m, i) => {
      const from = m.index! + m[0].length;
      const to = i + 1 < starts.length ? starts[i + 1].index! : text.length;
      return { path: m[1], message: text.slice(from, to) };
    });
  }
  return raw.map((e) => ({ path: e.path, message: translate(e.message) }));
}

const rules: [RegExp, (...m: string[]) => string][] = [
  [/^must be ≤ (\w+) \((.+)\)$/, (f, v) => `deve ser menor ou igual a ${lowerLabel(f)} (${v})`],
  [/^must be ≥ (\w+) \((.+)\)$/, (f, v) => `deve ser maior ou igual a ${lowerLabel(f)} (${v})`],
  [/^must be before end \((.+)\)$/, (v) => `deve ser antes do fim (${v})`],
  [/^must be after start \((.+)\)$/, (v) => `deve ser depois do início (${v})`],
  [/^overlaps windows\.(\d+) \((.+)\)$/, (i, v) => `se sobrepõe à janela ${Number(i) + 1} (${v})`],
  [/^starts before windows\.(\d+) \((.+)\)/, (i, v) => `começa antes da janela ${Number(i) + 1} (${v}); ordene as janelas pelo início`],
  [/^must be (?:a number of seconds )?from 0 to (\d+)(?: seconds)?$/, (max) => `deve estar entre 0 e ${max} segundos`],
  [/^must be an integer from (\d+) to (\d+)$/, (a, b) => `deve ser um número inteiro de ${a} a ${b}`],
  [/^must be a time HH:mm/, () => "deve ser um horário HH:mm entre 00:00 e 23:59"],
  [/^must be true or false$/, () => "deve ser verdadeiro ou falso"],
  [/^must be one of (.+)$/, (v) => `deve ser um destes valores: ${v}`],
];

function lowerLabel(field: string): string {
  const label = fieldLabel[`dispatch_rates.${field}`];
  return label ? label.charAt(0).toLowerCase() + label.slice(1) : field;
}

function translate(message: string): string {
  for (const [pattern, say] of rules) {
    const m = pattern.exec(message);
    if (m) return say(...m.slice(1));
  }
  return message;
}
