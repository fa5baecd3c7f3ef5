import type { AnyMessageType, CampaignStatus, DeliveryState, PauseReason } from "../../server/campaigns/schema";
import type { ChannelObject } from "../../server/channels/schema";
import { brasiliaTimeZone } from "../../server/time/brasilia";

type HealthState = ChannelObject["health"]["state"];

const dateTime = new Intl.DateTimeFormat("pt-BR", {
  dateStyle: "short",
  timeStyle: "short",
  timeZone: brasiliaTimeZone,
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

/** A number's health state (CONTRACT §7; docs/numbers.md#health-states). */
export const healthStateLabel: Record<string, string> = {
  ok: "Saudável",
  warming: "Aquecendo",
  cooling: "Resfriando",
  capped: "Limite do dia",
  restricted: "Restrito",
  logged_out: "Sessão encerrada",
  banned: "Banido",
} satisfies Record<HealthState, string>;

/** What the state means for sends and what to do about it (the badge's hint). */
export const healthStateAdvice: Record<string, string> = {
  ok: "Envia normalmente.",
  warming: "Número novo: o limite diário cresce a cada dia de aquecimento.",
  cooling: "O WhatsApp pediu para desacelerar: nada sai por este número até o fim da pausa.",
  capped: "Atingiu o limite de mensagens de hoje: volta a enviar às 00:00 (Brasília).",
  restricted: "O WhatsApp restringiu o número por um tempo: aguarde e conecte de novo.",
  logged_out: "A sessão foi encerrada no celular ou pelo WhatsApp: conecte o número de novo.",
  banned: "O WhatsApp baniu o número: conecte outro número a este canal.",
} satisfies Record<HealthState, string>;

const dayTimeSeconds = new Intl.DateTimeFormat("pt-BR", {
  day: "2-digit",
  month: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZone: brasiliaTimeZone,
});

const hourMinute = new Intl.DateTimeFormat("pt-BR", { hour: "2-digit", minute: "2-digit", timeZone: brasiliaTimeZone });

/** HH:mm in Brasília time. */
export function formatTime(value: Date | string | null | undefined, empty = "—"): string {
  if (!value) return empty;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? empty : hourMinute.format(d);
}

/** Day, month and time to the second (no year): deliveries of one campaign are seconds apart. */
export function formatDayTimeSeconds(value: Date | string | null | undefined, empty = "—"): string {
  if (!value) return empty;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? empty : dayTimeSeconds.format(d);
}

export const campaignStatusLabel: Record<string, string> = {
  pending: "Pendente",
  sending: "Enviando",
  paused: "Pausada",
  completed: "Concluída",
  failed: "Falhou",
  canceled: "Cancelada",
} satisfies Record<CampaignStatus, string>;

/** Why a campaign is paused (`pause_reason` of info-campaign and the campaigns list). */
export const pauseReasonLabel: Record<string, string> = {
  user: "por você",
  schedule: "fora do horário",
  channel_offline: "canal desconectado",
  channel_limits: "limites dos números",
  send_errors: "erros de envio",
} satisfies Record<PauseReason, string>;

export const deliveryStateLabel: Record<string, string> = {
  pending: "Pendente",
  sending: "Enviando",
  sent: "Enviado",
  failed: "Falhou",
} satisfies Record<DeliveryState, string>;

/** In the order the composer offers them (app/(dashboard)/campaigns/new/draft.ts). */
export const messageTypeLabel = {
  text: "Texto",
  image: "Imagem",
  video: "Vídeo",
  audio: "Áudio",
  document: "Documento",
  carousel: "Carrossel",
  poll: "Enquete",
} satisfies Record<AnyMessageType, string>;

/** Statuses that can still change on their own (every status but the final ones of server/dispatch/transition.ts): pages showing them keep polling. */
const activeStatus = {
  pending: true,
  sending: true,
  paused: true,
  completed: false,
  failed: false,
  canceled: false,
} satisfies Record<CampaignStatus, boolean>;

export function isActiveCampaign(status: string): boolean {
  return activeStatus[status as CampaignStatus] ?? false;
}
