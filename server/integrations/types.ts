/**
 * Marketplaces an integration can hold credentials for, and each one's credential fields (the names
 * their own APIs use). Two marketplaces whose credentials come from the user's browser session are not
 * accepted (spec: rejected by create); they are simply not in this list.
 */
export const integrationTypes = ["hotmart", "kiwify", "eduzz", "monetizze", "braip"] as const;
export type IntegrationType = (typeof integrationTypes)[number];

export interface CredentialFields {
  label: string;
  required: readonly string[];
  optional: readonly string[];
}

export const credentialFields: Record<IntegrationType, CredentialFields> = {
  hotmart: { label: "Hotmart", required: ["client_id", "client_secret", "basic_token"], optional: ["hottok"] },
  // webhook_token: the token of the webhook registered in Kiwify, the key of its `signature` (inbound-hook.ts).
  kiwify: { label: "Kiwify", required: ["client_id", "client_secret", "account_id"], optional: ["webhook_token"] },
  eduzz: { label: "Eduzz", required: ["email", "public_key", "api_key"], optional: [] },
  monetizze: { label: "Monetizze", required: ["consumer_key"], optional: [] },
  braip: { label: "Braip", required: ["api_token"], optional: [] },
};

export const allFields = (type: IntegrationType) => [...credentialFields[type].required, ...credentialFields[type].optional];

/** For the OpenAPI description: `hotmart: client_id, client_secret, basic_token (+ hottok)`. */
export const credentialFieldsDescription = integrationTypes
  .map((t) => {
    const f = credentialFields[t];
    return `\`${t}\`: ${f.required.join(", ")}${f.optional.length ? ` (optional: ${f.optional.join(", ")})` : ""}`;
  })
  .join("; ");

/**
 * Marketplaces whose inbound webhook (purchases and refunds, docs/integrations.md#inbound-webhooks-buyers) is
 * accepted: those whose format and authentication could be confirmed from their documentation. The others'
 * URL answers 501 rather than a guessed signature scheme.
 */
export const hookTypes = ["hotmart", "kiwify"] as const satisfies readonly IntegrationType[];
export type HookType = (typeof hookTypes)[number];
export const acceptsHooks = (type: string): type is HookType => (hookTypes as readonly string[]).includes(type);

/** The credential that authenticates each accepted marketplace's webhook. */
export const hookSecretField: Record<HookType, string> = { hotmart: "hottok", kiwify: "webhook_token" };
