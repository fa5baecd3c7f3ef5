/** Group actions in the dashboard's words (CONTRACT §8; docs/groups.md#dashboard). */
import type { z } from "zod";
import type { groupActionState, groupActionStatus, groupActionType } from "../../../server/groups/actions/schema";

type ActionType = z.infer<typeof groupActionType>;

/** In the order the form offers them (moderation's delete_message is made by the service only). */
export const actionTypeLabel = {
  close_messages: "Fechar grupos (só admins enviam)",
  open_messages: "Abrir grupos",
  lock_info: "Trancar dados",
  unlock_info: "Destrancar",
  set_subject: "Renomear",
  set_description: "Descrição",
  set_picture: "Foto",
  promote: "Promover admins",
  demote: "Rebaixar admins",
  remove: "Remover participantes",
} satisfies Record<Exclude<ActionType, "delete_message">, string>;

export type { ActionType };

export const actionStatusLabel = {
  scheduled: "Agendada",
  running: "Em andamento",
  completed: "Concluída",
  canceled: "Cancelada",
} satisfies Record<z.infer<typeof groupActionStatus>, string>;

export const groupStateLabel = {
  pending: "Pendente",
  done: "Feito",
  failed: "Falhou",
  canceled: "Cancelado",
} satisfies Record<z.infer<typeof groupActionState>, string>;

/** Statuses that still change on their own: pages showing them keep polling. */
export const isActiveAction = (status: string) => status === "scheduled" || status === "running";

/** A failed group's reason (not_admin, group_gone, no_channel, platform_error: …) in Portuguese. */
export function reasonLabel(reason: string | null): string {
  if (!reason) return "";
  if (reason === "not_admin") return "Nenhum número da conta é admin do grupo";
  if (reason === "group_gone") return "O grupo não existe mais";
  if (reason === "no_channel") return "Nenhum número admin pôde agir por 30 min";
  if (reason.startsWith("platform_error")) return `O WhatsApp recusou: ${reason.replace(/^platform_error:?\s*/, "")}`;
  return reason;
}

/** What an action does, in a line: its type and its value (the new name, how many participants). */
export function describeAction(action: { type: ActionType; subject?: string; description?: string; participants?: string[] }): string {
  if (action.type === "delete_message") return "Moderação: apagar mensagens";
  const label = actionTypeLabel[action.type];
  if (action.type === "set_subject") return `${label}: “${action.subject ?? ""}”`;
  if (action.participants) return `${label}: ${action.participants.length} ${action.participants.length === 1 ? "número" : "números"}`;
  return label;
}

/** The badge colours the campaigns use, for an action's status and a group's state. */
export const badgeClass: Record<string, string> = {
  scheduled: "badge-pending",
  running: "badge-sending",
  completed: "badge-completed",
  canceled: "badge-canceled",
  pending: "badge-pending",
  done: "badge-completed",
  failed: "badge-failed",
};
