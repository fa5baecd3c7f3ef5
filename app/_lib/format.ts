const dateTime = new Intl.DateTimeFormat("pt-BR", {
  dateStyle: "short",
  timeStyle: "short",
  timeZone: "America/Sao_Paulo",
});

/** Dates come over JSON as ISO strings even where the output type says Date. */
export function formatDateTime(value: Date | string | null | undefined, empty = "—"): string {
  if (!value) return empty;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? empty : dateTime.format(d);
}

export const channelStatusLabel: Record<string, string> = {
  connecting: "Conectando",
  connected: "Conectado",
  disconnected: "Desconectado",
};
