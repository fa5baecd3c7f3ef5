import { partnerScopes } from "../../db/schema";

export type Scope = (typeof partnerScopes)[number];

/**
 * What each scope lets a partner app read, as the consent page shows it. `autoApproved`: an app
 * registered in the dashboard may ask users for it at once; the others wait for the operator
 * (`npm run admin -- approve-partner-app`).
 */
export const scopeCatalog: Record<Scope, { description: string; sensitive: boolean; autoApproved: boolean }> = {
  "statistics:read": {
    description: "Ver estatísticas agregadas da conta (campanhas criadas, mensagens enviadas, falhas e leituras), sem dados pessoais.",
    sensitive: false,
    autoApproved: true,
  },
  "campaigns:read": {
    description: "Ver a lista das suas campanhas: nome, situação e data de criação (sem o conteúdo das mensagens nem os grupos).",
    sensitive: true,
    autoApproved: true,
  },
  "settings:read": {
    description: "Ver as configurações de envio da conta (ritmo de disparo, fila e horários).",
    sensitive: true,
    autoApproved: false,
  },
};

export const isScope = (s: string): s is Scope => (partnerScopes as readonly string[]).includes(s);

/** "a b  a" → ["a","b"]: space-separated (RFC 6749 §3.3), duplicates dropped, order kept. */
export const parseScope = (raw: string | null | undefined) => [...new Set((raw ?? "").split(" ").filter(Boolean))];

export const autoApprovedScopes = (requested: string[]) => requested.filter((s) => isScope(s) && scopeCatalog[s].autoApproved);
