"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useState } from "react";
import type { GroupActionInput } from "../../../server/groups/actions/schema";
import { ErrorAlert, Field } from "../../_components/ui";
import { describeSchedule, isFutureInBrasilia, suggestedSchedule, toScheduledAt } from "../../_lib/brasilia-time";
import { useTRPC } from "../../_lib/trpc";
import { brasiliaParts } from "../../../server/time/brasilia";
import { fieldErrors } from "../settings/settings-fields";
import { type ActionType, actionTypeLabel } from "./labels";

/** Where an action goes: a launch's groups (when it runs) or a segment's. */
export type ActionTarget = { id_launch: string } | { id_segment: string };

/** The form's fields the server's errors are shown under (anything else goes above the button). */
type FormField = "name" | "subject" | "description" | "picture_url" | "participants" | "scheduled_at" | "target";

const participantTypes = new Set<ActionType>(["promote", "demote", "remove"]);

/** "action.participants.2" → participants; "scheduled_at" → scheduled_at; the target's ids → target. */
function formField(path: string): FormField | undefined {
  const [head, second] = path.split(".");
  if (head === "action") return (["subject", "description", "picture_url", "participants"] as const).find((f) => f === second);
  if (head === "id_segment" || head === "id_launch") return "target";
  return head === "name" || head === "scheduled_at" ? head : undefined;
}

/** The create-group-action messages people meet most, in Portuguese (the rest as the server says them). */
const translations: [RegExp, (...m: string[]) => string][] = [
  [/^must be an https URL/, () => "deve ser um endereço https"],
  [/^must be in the future \(Brasília time now: (.+)\)/, (now) => `deve ser no futuro (agora em Brasília: ${now})`],
  [/^must be a phone number with country code/, () => "cada telefone deve ter DDI e DDD (10 a 15 dígitos)"],
  [/^(\d+) is one of your own numbers/, (p) => `${p} é um número da sua conta: não pode ser removido`],
  [/^Too small/, () => "preencha este campo"],
  [/^Too big/, () => "texto ou lista longa demais"],
];
const inPortuguese = (message: string) => {
  for (const [pattern, say] of translations) {
    const m = pattern.exec(message);
    if (m) return say(...m.slice(1));
  }
  return message;
};

/** The server's 400 read per field: a JSON list of zod issues, or a domain error's "path: message". */
function errorsByField(error: unknown): { byField: Partial<Record<FormField, string>>; rest: boolean } {
  let list = fieldErrors(error);
  const single = error instanceof Error ? /^([a-z_]+(?:\.[a-z0-9_]+)*): (.+)$/s.exec(error.message) : null;
  if (list.length === 0 && single) list = [{ path: single[1], message: single[2] }];
  const byField: Partial<Record<FormField, string>> = {};
  let rest = list.length === 0;
  for (const e of list) {
    const f = formField(e.path);
    const message = inPortuguese(e.message);
    if (f) byField[f] = byField[f] ? `${byField[f]}; ${message}` : message;
    else rest = true;
  }
  return { byField, rest };
}

/** Phones typed one a line (or separated by commas or spaces): digits only. */
const parsePhones = (text: string) =>
  text
    .split(/[\n,;]+/)
    .map((p) => p.replace(/\D/g, ""))
    .filter(Boolean);

/**
 * Adds a group action to a launch's or a segment's groups (CONTRACT §8): the type, its fields, now or a Brasília date
 * and time. The picture goes by URL: create-group-action takes `picture_url` only (the service fetches it once).
 */
export function GroupActionForm({ target, onCreated }: { target: ActionTarget; onCreated?: (id: string) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [type, setType] = useState<keyof typeof actionTypeLabel>("close_messages");
  const [name, setName] = useState("");
  const [subject, setSubject] = useState("");
  const [description, setDescription] = useState("");
  const [pictureUrl, setPictureUrl] = useState("");
  const [participants, setParticipants] = useState("");
  const [when, setWhen] = useState<"now" | "scheduled">("now");
  const [{ date, time }, setSchedule] = useState(() => suggestedSchedule(new Date()));
  const [added, setAdded] = useState<string>();

  const create = useMutation(
    trpc.groupActions.create.mutationOptions({
      onSuccess: async (out) => {
        setAdded(when === "now" ? "Ação adicionada: começa agora." : `Ação agendada para ${describeSchedule(date, time)} (Brasília).`);
        await queryClient.invalidateQueries(trpc.groupActions.list.queryFilter());
        onCreated?.(out.id_action);
      },
    }),
  );
  const { byField, rest } = create.error ? errorsByField(create.error) : { byField: {}, rest: false };
  const nowInBrasilia = brasiliaParts(new Date());
  const inPast = when === "scheduled" && date !== "" && time !== "" && !isFutureInBrasilia(date, time, new Date());

  function spec(): GroupActionInput {
    if (type === "set_subject") return { type, subject };
    if (type === "set_description") return { type, description };
    if (type === "set_picture") return { type, picture_url: pictureUrl.trim() };
    if (type === "promote" || type === "demote" || type === "remove") return { type, participants: parsePhones(participants) };
    return { type };
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setAdded(undefined);
    create.mutate({
      ...target,
      name: name.trim() || undefined,
      action: spec(),
      scheduled_at: when === "scheduled" ? toScheduledAt(date, time) : undefined,
    });
  }

  const error = (f: FormField): ReactNode =>
    byField[f] ? (
      <small className="field-error" role="alert" data-testid={`error-${f}`}>
        {byField[f]}
      </small>
    ) : null;
  const invalid = (f: FormField) => (byField[f] ? true : undefined);

  return (
    <form className="stack group-action-form" onSubmit={onSubmit} aria-label="Nova ação nos grupos">
      <div className="form-grid">
        <Field label="O que fazer">
          {(c) => (
            <select {...c} value={type} onChange={(e) => setType(e.target.value as keyof typeof actionTypeLabel)}>
              {Object.entries(actionTypeLabel).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Nome (opcional)" hint="Para reconhecer a ação no cronograma, ex.: Fechar às 22h">
          {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} maxLength={100} aria-invalid={invalid("name")} />}
        </Field>
      </div>
      {error("name")}

      {type === "set_subject" && (
        <Field label="Novo nome dos grupos" hint="{n} vira o número do grupo: “Turma {n} — Aulas liberadas” → Turma 1 — Aulas liberadas, Turma 2 …">
          {(c) => <input {...c} value={subject} onChange={(e) => setSubject(e.target.value)} maxLength={100} required aria-invalid={invalid("subject")} />}
        </Field>
      )}
      {error("subject")}
      {type === "set_description" && (
        <Field label="Nova descrição" hint="Até 2048 caracteres; vazia apaga a descrição">
          {(c) => <textarea {...c} value={description} onChange={(e) => setDescription(e.target.value)} rows={4} aria-invalid={invalid("description")} />}
        </Field>
      )}
      {error("description")}
      {type === "set_picture" && (
        <Field
          label="Endereço da foto (https)"
          hint="Uma imagem JPEG ou PNG de até 5 MB, publicada em um endereço https; o serviço a baixa uma vez ao criar a ação"
        >
          {(c) => (
            <input
              {...c}
              type="url"
              inputMode="url"
              value={pictureUrl}
              onChange={(e) => setPictureUrl(e.target.value)}
              placeholder="https://…/foto.jpg"
              required
              aria-invalid={invalid("picture_url")}
            />
          )}
        </Field>
      )}
      {error("picture_url")}
      {participantTypes.has(type) && (
        <Field
          label="Participantes"
          hint={`Um telefone por linha, com DDI e DDD (ex.: 5511999990000); até ${type === "remove" ? 200 : 20}. ${type === "remove" ? "Os números da sua conta não podem ser removidos." : ""}`}
        >
          {(c) => (
            <textarea {...c} value={participants} onChange={(e) => setParticipants(e.target.value)} rows={3} required aria-invalid={invalid("participants")} />
          )}
        </Field>
      )}
      {error("participants")}

      <fieldset>
        <legend>Quando</legend>
        <div className="row wrap">
          <label className="check">
            <input type="radio" name="group-action-when" checked={when === "now"} onChange={() => setWhen("now")} />
            Agora
          </label>
          <label className="check">
            <input type="radio" name="group-action-when" checked={when === "scheduled"} onChange={() => setWhen("scheduled")} />
            Agendar
          </label>
        </div>
        {when === "scheduled" && (
          <div className="schedule">
            <div className="row align-end wrap">
              <Field label="Data">
                {(c) => (
                  <input
                    {...c}
                    type="date"
                    value={date}
                    min={nowInBrasilia.date}
                    onChange={(e) => setSchedule((s) => ({ ...s, date: e.target.value }))}
                    required
                    aria-invalid={invalid("scheduled_at")}
                  />
                )}
              </Field>
              <Field label="Hora">
                {(c) => (
                  <input
                    {...c}
                    type="time"
                    value={time}
                    onChange={(e) => setSchedule((s) => ({ ...s, time: e.target.value }))}
                    required
                    aria-invalid={invalid("scheduled_at")}
                  />
                )}
              </Field>
              <span className="badge badge-tz">Horário de Brasília</span>
            </div>
            <p className="muted small">Agora em Brasília: {describeSchedule(nowInBrasilia.date, nowInBrasilia.time)}.</p>
            {inPast && (
              <p className="alert alert-error" role="alert">
                Escolha um horário no futuro.
              </p>
            )}
          </div>
        )}
        {error("scheduled_at")}
      </fieldset>

      {error("target")}
      {rest && <ErrorAlert error={create.error} />}
      {added && (
        <p className="alert alert-success" role="status">
          {added}
        </p>
      )}
      <div>
        <button type="submit" className="btn btn-primary" disabled={create.isPending || inPast}>
          {create.isPending ? "Adicionando…" : when === "now" ? "Fazer agora" : "Agendar ação"}
        </button>
      </div>
    </form>
  );
}
