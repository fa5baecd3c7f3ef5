"use client";

import { Field } from "../../_components/ui";

/** The launch form's `tracking.meta` fields, as typed (docs/launches.md#metas-conversions-api). */
export interface MetaDraft {
  pixelId: string;
  accessToken: string;
  eventName: string;
  testEventCode: string;
}

export const emptyMetaDraft: MetaDraft = { pixelId: "", accessToken: "", eventName: "Lead", testEventCode: "" };

/**
 * Pixel, access token (a password field: never shown back, the server answers only that one is saved), event and
 * test code. `tokenOptional`: a launch that has a token keeps it when the field is left empty.
 */
export function MetaFields({ draft, onChange, tokenOptional = false }: { draft: MetaDraft; onChange: (d: MetaDraft) => void; tokenOptional?: boolean }) {
  const set = (k: keyof MetaDraft) => (e: { target: { value: string } }) => onChange({ ...draft, [k]: e.target.value });
  return (
    <div className="form-grid">
      <Field label="ID do pixel" hint="O número do pixel (conjunto de dados) no Gerenciador de Eventos.">
        {(c) => <input {...c} value={draft.pixelId} onChange={set("pixelId")} inputMode="numeric" pattern="[0-9]{1,30}" title="Só números" maxLength={30} />}
      </Field>
      <Field
        label="Token de acesso"
        hint={
          tokenOptional
            ? "Deixe vazio para manter o token salvo. Ele nunca é exibido."
            : "Gerado nas configurações do pixel. Fica criptografado e nunca é exibido."
        }
      >
        {(c) => (
          <input
            {...c}
            type="password"
            autoComplete="off"
            value={draft.accessToken}
            onChange={set("accessToken")}
            maxLength={1000}
            required={!tokenOptional && draft.pixelId.trim() !== ""}
          />
        )}
      </Field>
      <Field label="Evento" hint="Enviado a cada clique contado. Padrão: Lead.">
        {(c) => <input {...c} value={draft.eventName} onChange={set("eventName")} maxLength={100} placeholder="Lead" />}
      </Field>
      <Field
        label={
          <>
            Código de teste <small className="muted">(opcional)</small>
          </>
        }
        hint="Da aba Testar eventos: os eventos aparecem lá e não contam para os anúncios."
      >
        {(c) => <input {...c} value={draft.testEventCode} onChange={set("testEventCode")} maxLength={100} placeholder="TEST12345" />}
      </Field>
    </div>
  );
}
